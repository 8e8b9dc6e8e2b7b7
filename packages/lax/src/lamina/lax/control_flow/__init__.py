"""Control flow: cond and switch, while and fori loops, scan and map, associative_scan,
and the linear solves and root finding with custom derivatives."""
