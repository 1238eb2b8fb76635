"""A tiny module the README's first command edits."""


def greet(name):
    return "Hello, " + name


def farewell(name):
    return "Goodbye, " + name
