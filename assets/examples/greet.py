"""A tiny module the README's `patchgate merge` examples edit."""


def greet(name):
    return "Hello, " + name


def farewell(name):
    return "Goodbye, " + name
