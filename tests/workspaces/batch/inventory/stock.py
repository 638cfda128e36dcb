def count(x):
    return len(x)


def total(x):
    return sum(x)


def broken(x):
    return x
