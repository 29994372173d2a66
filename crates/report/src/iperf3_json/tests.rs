use super::start::rfc1123;

#[test]
fn timestamps_are_rfc1123_in_gmt() {
    assert_eq!(rfc1123(1_795_464_566), "Mon, 23 Nov 2026 20:09:26 GMT");
    assert_eq!(rfc1123(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(rfc1123(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
}
