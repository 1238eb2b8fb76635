def shout(name):
    return greet(name).upper()
