print("swipectl: not yet built")
