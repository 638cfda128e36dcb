def before():
    return 1


def broken(:
    return (


class Survivor:
    def method(self):
        return 2


def after():
    return 3
