"""`envhub validate`: the gate every task passes before it is served as validated."""
