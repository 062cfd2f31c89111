"""The emitters of tools/generate.py: one module per target, all fed by proto.py's one reading
of the vendored proto and core's error table."""
