def clean(name: str) -> str:
    return "😀 hello " + name
