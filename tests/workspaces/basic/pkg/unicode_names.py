"""Names and text beyond ASCII: positions differ between encodings."""


def café(x):
    return "ñ" + x


def emoji():
    return "😀😀"


class Ünïcode:
    def grüß(self):
        return "👋🏽 hello"
