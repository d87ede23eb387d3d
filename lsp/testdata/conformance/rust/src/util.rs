pub fn double(value: i32) -> i32 {
    value * 2
}
