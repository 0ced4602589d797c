print("log-torture: not yet built")
