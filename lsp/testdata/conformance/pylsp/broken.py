import os


def area(side):
    return side * side


def total():
    return area(2) + undefined_name + other_missing
