"""``wrap_api_functions``: each plain function of a namespace becomes an API boundary,
once; a function that is a boundary already (a layer re-exporting another layer's) is
kept, so both layers hold the same object."""

from lamina.ir import api_boundary, wrap_api_functions


def _double(x):
    return 2 * x


def test_wraps_plain_functions_once_and_keeps_boundaries():
    shared = api_boundary(_double, note=False)
    namespace = {"double": _double, "shared": shared, "number": 3}
    wrap_api_functions(namespace, ["double", "shared", "number"])
    assert namespace["double"] is not _double and namespace["double"](4) == 8
    assert namespace["double"].__wrapped__ is _double
    assert namespace["shared"] is shared and namespace["number"] == 3
    rewrapped = dict(namespace)
    wrap_api_functions(rewrapped, ["double"])
    assert rewrapped["double"] is namespace["double"]
