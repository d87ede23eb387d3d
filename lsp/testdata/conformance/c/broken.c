int broken(void) {
    const char *s = "😀 hello"; return s[0] + undefined_name;
}
int count(void) { return 3 }
