"""kisim's laboratory: the measurements behind ``compare``, ``tour``, ``probe``, ``demo``,
``kprobe`` and the benchmarks, in one place above :mod:`probes` and :mod:`tracing`.

- :mod:`lab.measure`: the cost model and :func:`~lab.measure.measure`, the one
  computation of a cost per pass or per hit (two runs differenced, divided);
- :mod:`lab.mechanisms`: the mechanism table and how each row is built,
  counted and armed;
- :mod:`lab.compare`: the comparison of every mechanism on one arch;
- :mod:`lab.orderings`: the published orderings, each naming the variable it changes;
- :mod:`lab.kprobe`, :mod:`lab.lineprobe`, :mod:`lab.demo`, :mod:`lab.tour`:
  what the other commands measure;
- :mod:`lab.plot`: the comparison's plots.
"""
