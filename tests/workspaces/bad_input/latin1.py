# -*- coding: latin-1 -*-
def café():
    return "é"
