print("engine-bench: not yet built")
