int clean(void) {
    const char *s = "😀 hello";
    return s[0];
}
