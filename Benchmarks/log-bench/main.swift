print("log-bench: not yet built")
