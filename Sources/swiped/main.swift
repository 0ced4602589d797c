print("swiped: not yet built")
