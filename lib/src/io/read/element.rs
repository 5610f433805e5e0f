//! The element types a table can hold, and how each source type becomes one. Every conversion is
//! the `as` cast from the source type, so an `f32` read here is bit-identical to the `x as f32`
//! the older readers wrote; text goes through the type's own `FromStr` (an `f32` is never parsed
//! as an `f64` first, which could round twice).

use std::fmt::Display;
use std::str::FromStr;

/// A number type the reader produces: `f32` (FlyHash, cortical) or `f64` (OCNN).
///
/// The `from_*` methods are the conversions from each type a file can store; for `f32` and `f64`
/// they are `as` casts.
pub trait Element: Copy + FromStr + Display + Send + Sync + 'static {
    /// What a text field must be, for messages (`"a number"`).
    const WHAT: &'static str;
    /// From an unsigned byte (IDX `0x08`, NPY `u1` and `b1`).
    fn from_u8(x: u8) -> Self;
    /// From a signed byte.
    fn from_i8(x: i8) -> Self;
    /// From a 16-bit unsigned integer.
    fn from_u16(x: u16) -> Self;
    /// From a 16-bit signed integer.
    fn from_i16(x: i16) -> Self;
    /// From a 32-bit unsigned integer.
    fn from_u32(x: u32) -> Self;
    /// From a 32-bit signed integer.
    fn from_i32(x: i32) -> Self;
    /// From a 64-bit unsigned integer.
    fn from_u64(x: u64) -> Self;
    /// From a 64-bit signed integer.
    fn from_i64(x: i64) -> Self;
    /// From a single-precision float (NPY `f2` is widened to `f32` first, exactly).
    fn from_f32(x: f32) -> Self;
    /// From a double-precision float.
    fn from_f64(x: f64) -> Self;
    /// Whether the value may be used (not NaN or infinite).
    fn finite(self) -> bool;
}

macro_rules! float_element {
    ($t:ty) => {
        impl Element for $t {
            const WHAT: &'static str = "a number";
            fn from_u8(x: u8) -> Self {
                x as $t
            }
            fn from_i8(x: i8) -> Self {
                x as $t
            }
            fn from_u16(x: u16) -> Self {
                x as $t
            }
            fn from_i16(x: i16) -> Self {
                x as $t
            }
            fn from_u32(x: u32) -> Self {
                x as $t
            }
            fn from_i32(x: i32) -> Self {
                x as $t
            }
            fn from_u64(x: u64) -> Self {
                x as $t
            }
            fn from_i64(x: i64) -> Self {
                x as $t
            }
            fn from_f32(x: f32) -> Self {
                x as $t
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
        }
    };
}

float_element!(f32);
float_element!(f64);

/// A label as read: an integer, or the value that is not one (kept so the message can show it).
/// Reading labels through the same generic path as numbers keeps one parser per format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label(pub(crate) Result<i64, f64>);

/// 2^63: the first float past `i64::MAX`.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

impl Label {
    fn of_f64(x: f64) -> Label {
        // NaN and ±inf have a NaN fraction, so they fail the first test.
        if x.fract() == 0.0 && (-TWO_63..TWO_63).contains(&x) {
            Label(Ok(x as i64))
        } else {
            Label(Err(x))
        }
    }
}

/// A text field that is not an integer (the message is written by the parser, with the line).
#[derive(Debug)]
pub(crate) struct NotAnInteger;

impl FromStr for Label {
    type Err = NotAnInteger;
    fn from_str(s: &str) -> Result<Label, NotAnInteger> {
        // `1`, and also `1.0` or `1e3` (a float column of whole numbers, as pandas writes labels).
        match s.parse::<i64>() {
            Ok(v) => Ok(Label(Ok(v))),
            Err(_) => s.parse::<f64>().ok().map(Label::of_f64).filter(|l| l.0.is_ok()).ok_or(NotAnInteger),
        }
    }
}

impl Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Ok(v) => write!(f, "{v}"),
            Err(v) => write!(f, "{v}"),
        }
    }
}

impl Element for Label {
    const WHAT: &'static str = "an integer";
    fn from_u8(x: u8) -> Self {
        Label(Ok(x as i64))
    }
    fn from_i8(x: i8) -> Self {
        Label(Ok(x as i64))
    }
    fn from_u16(x: u16) -> Self {
        Label(Ok(x as i64))
    }
    fn from_i16(x: i16) -> Self {
        Label(Ok(x as i64))
    }
    fn from_u32(x: u32) -> Self {
        Label(Ok(x as i64))
    }
    fn from_i32(x: i32) -> Self {
        Label(Ok(x as i64))
    }
    fn from_u64(x: u64) -> Self {
        Label(i64::try_from(x).map_err(|_| x as f64))
    }
    fn from_i64(x: i64) -> Self {
        Label(Ok(x))
    }
    fn from_f32(x: f32) -> Self {
        Label::of_f64(x as f64)
    }
    fn from_f64(x: f64) -> Self {
        Label::of_f64(x)
    }
    fn finite(self) -> bool {
        // A non-integer is reported by the label check, which names it as such.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_accept_whole_numbers_only() {
        let ok = |s: &str| s.parse::<Label>().ok().and_then(|l| l.0.ok());
        assert_eq!(ok("7"), Some(7));
        assert_eq!(ok("-3"), Some(-3));
        assert_eq!(ok("2.0"), Some(2));
        assert_eq!(ok("1e3"), Some(1000));
        assert_eq!(ok("1.5"), None);
        assert_eq!(ok("nan"), None);
        assert_eq!(ok("inf"), None);
        assert_eq!(ok("x"), None);
        assert!(Label::from_f64(0.5).0.is_err());
        assert!(Label::from_f64(TWO_63).0.is_err());
        assert_eq!(Label::from_f64(-TWO_63).0, Ok(i64::MIN));
        assert!(Label::from_u64(u64::MAX).0.is_err());
        assert_eq!(Label::from_u64(5).0, Ok(5));
    }

    #[test]
    fn floats_are_as_casts() {
        assert_eq!(f32::from_u64(16_777_217), 16_777_217u64 as f32);
        assert_eq!(f32::from_f64(0.1), 0.1f64 as f32);
        assert_eq!(f64::from_f32(0.1), 0.1f32 as f64);
        assert_eq!(f32::from_i8(-1), -1.0);
    }
}
