"""Agents written against the official a2a-sdk (1.x) only, as its documentation and samples
write them. Each runs unchanged on the SDK's own server and on ours (`a2a_native.compat`);
`test_compat.py` drives both with the SDK's client and compares what they answer."""
