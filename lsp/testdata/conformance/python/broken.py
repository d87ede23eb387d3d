def broken(name: str) -> int:
    print("😀 hello", undefined_name)
    return name
