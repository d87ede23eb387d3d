mod util;

fn main() {
    let total: i32 = util::double(2);
    let wrong: i32 = "text";
    println!("{} {}", total, wrong + missing_name);
}
