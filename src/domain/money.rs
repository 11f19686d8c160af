//! Money, exact: an amount is a whole number of cents, and on the wire a decimal string
//! with two fraction digits ("12.50"), never a float, so no total is ever off by a cent
//! and every client reads the same figure. The shop's currency is a setting, not part of
//! the amount.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An amount of money: a price, an order's total, a day's takings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Money(i64);

/// A pet's price: [`Money`] from "0.00" to "999999.99".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Price(Money);

impl Money {
    pub const ZERO: Money = Money(0);

    pub fn from_cents(cents: i64) -> Result<Self, String> {
        if cents < 0 {
            return Err(format!("an amount of money cannot be negative, got {cents} cents"));
        }
        Ok(Self(cents))
    }

    pub fn cents(self) -> i64 {
        self.0
    }

    /// `self` times `quantity` (a line's total), `None` if it would not fit.
    pub fn times(self, quantity: i64) -> Option<Money> {
        self.0.checked_mul(quantity).filter(|c| *c >= 0).map(Money)
    }

    /// "1234.50": digits, a point, two digits; nothing else (no sign, no exponent, no
    /// thousands separator), so that a value is read the same in every locale.
    pub fn parse(raw: &str, what: &str) -> Result<Self, String> {
        let invalid = || {
            format!(
                "{what} must be a decimal string with two fraction digits, like \"12.50\"; got {}",
                super::quoted(raw)
            )
        };
        let (whole, fraction) = raw.split_once('.').ok_or_else(invalid)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !digits(fraction) || fraction.len() != 2 || whole.len() > 15 {
            return Err(invalid());
        }
        let whole: i64 = whole.parse().map_err(|_| invalid())?;
        let fraction: i64 = fraction.parse().map_err(|_| invalid())?;
        Ok(Self(whole * 100 + fraction))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

impl TryFrom<String> for Money {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s, "an amount")
    }
}

impl From<Money> for String {
    fn from(m: Money) -> String {
        m.to_string()
    }
}

impl Price {
    /// The highest price: 999999.99.
    pub const MAX_CENTS: i64 = 99_999_999;

    pub fn parse(raw: &str) -> Result<Self, String> {
        let money = Money::parse(raw, "price")?;
        Self::from_money(money)
    }

    pub fn from_cents(cents: i64) -> Result<Self, String> {
        Self::from_money(Money::from_cents(cents)?)
    }

    fn from_money(money: Money) -> Result<Self, String> {
        if money.cents() > Self::MAX_CENTS {
            return Err(format!("price must be at most \"999999.99\", got \"{money}\""));
        }
        Ok(Self(money))
    }

    pub fn money(self) -> Money {
        self.0
    }

    pub fn cents(self) -> i64 {
        self.0.cents()
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl TryFrom<String> for Price {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}

impl From<Price> for String {
    fn from(p: Price) -> String {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_two_fraction_digits_from_zero_to_999999_99() {
        assert_eq!(Price::parse("0.00").unwrap().cents(), 0);
        assert_eq!(Price::parse("12.50").unwrap().to_string(), "12.50");
        assert_eq!(Price::parse("999999.99").unwrap().cents(), 99_999_999);
        assert_eq!(Price::parse("007.05").unwrap().to_string(), "7.05");
        for bad in
            ["1000000.00", "12.5", "12", "12.505", "-1.00", "+1.00", "1e2", " 1.00", "1,00", ".50", "1.", ""]
        {
            assert!(Price::parse(bad).is_err(), "{bad:?} is not a price");
        }
        assert!(Price::parse("12.5").unwrap_err().contains("\"12.50\""));
    }

    #[test]
    fn totals_multiply_exactly() {
        let price = Price::parse("0.10").unwrap().money();
        assert_eq!(price.times(3).unwrap().to_string(), "0.30");
        assert_eq!(
            Price::parse("999999.99").unwrap().money().times(10_000).unwrap().to_string(),
            "9999999900.00"
        );
        assert_eq!(serde_json::to_string(&Money::from_cents(1205).unwrap()).unwrap(), "\"12.05\"");
        assert!(serde_json::from_str::<Price>("12.5").is_err(), "a JSON number is refused: never a float");
    }
}
