//! The shop's settings (`GET` and `PUT /store/settings`): its name on receipts, the
//! currency its prices are in, the time zone its days are counted in (the sales report),
//! and the stock below which a pet is low.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Name;
use crate::error::{Error, Result};

bounded_int! {
    /// The stock below which a pet is low on stock.
    LowStockBelow, "lowStockBelow", 0..=1_000_000
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShopSettings {
    pub shop_name: Name,
    pub currency: Currency,
    pub time_zone: TimeZone,
    /// A pet with less stock than this is low on stock.
    pub low_stock_below: LowStockBelow,
}

impl ShopSettings {
    /// What a shop has until it saves its own: EUR, the machine's time zone, low below 5.
    pub fn defaults() -> Self {
        Self {
            shop_name: Name::parse("Petstore").expect("a valid name"),
            currency: Currency::parse("EUR").expect("a currency"),
            time_zone: TimeZone::of_this_machine(),
            low_stock_below: LowStockBelow::try_from(5).expect("in range"),
        }
    }

    /// Settings as either engine stored them, a column each (the columns' own checks keep
    /// them close to valid; a time zone this Petstore does not know is an internal error,
    /// not a shop without settings).
    pub fn from_stored(name: &str, currency: &str, zone: &str, low: i64) -> Result<Self> {
        Ok(Self {
            shop_name: Name::parse(name).map_err(Error::internal)?,
            currency: Currency::parse(currency).map_err(Error::internal)?,
            time_zone: TimeZone::parse(zone).map_err(Error::internal)?,
            low_stock_below: LowStockBelow::try_from(low).map_err(Error::internal)?,
        })
    }
}

/// An ISO 4217 currency code ("EUR").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency([u8; 3]);

/// The active ISO 4217 codes (2024), so that a typo ("EUE") is refused, not printed on
/// every receipt.
const ISO_4217: &str = "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN \
     BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP \
     GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK \
     LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB \
     PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB \
     TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG";

impl Currency {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let code = raw.trim();
        match <[u8; 3]>::try_from(code.as_bytes()) {
            Ok(bytes) if ISO_4217.split(' ').any(|c| c == code) => Ok(Self(bytes)),
            _ => Err(format!("currency must be an ISO 4217 code in capitals, like \"EUR\"; got {raw:?}")),
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("ASCII")
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<String> for Currency {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}

impl From<Currency> for String {
    fn from(c: Currency) -> String {
        c.to_string()
    }
}

/// An IANA time zone ("Europe/Madrid"): the shop's days begin at its midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TimeZone(chrono_tz::Tz);

impl TimeZone {
    pub fn parse(raw: &str) -> Result<Self, String> {
        chrono_tz::Tz::from_str(raw.trim())
            .map(Self)
            .map_err(|_| format!("timeZone must be an IANA time zone, like \"Europe/Madrid\"; got {raw:?}"))
    }

    /// The zone this machine is set to, or UTC if it cannot be told.
    pub fn of_this_machine() -> Self {
        iana_time_zone::get_timezone()
            .ok()
            .and_then(|name| Self::parse(&name).ok())
            .unwrap_or(Self(chrono_tz::UTC))
    }

    pub fn tz(self) -> chrono_tz::Tz {
        self.0
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl TryFrom<String> for TimeZone {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}

impl From<TimeZone> for String {
    fn from(z: TimeZone) -> String {
        z.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currencies_and_time_zones_are_checked() {
        assert_eq!(Currency::parse("EUR").unwrap().as_str(), "EUR");
        for bad in ["eur", "EUE", "EU", "EURO", ""] {
            assert!(Currency::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(TimeZone::parse("Europe/Madrid").unwrap().to_string(), "Europe/Madrid");
        assert!(TimeZone::parse("Mars/Olympus").is_err());
        let settings: ShopSettings = serde_json::from_str(
            r#"{"shopName": "Pets & Co", "currency": "USD", "timeZone": "America/New_York", "lowStockBelow": 3}"#,
        )
        .unwrap();
        assert_eq!(settings.currency.as_str(), "USD");
        assert!(serde_json::from_str::<ShopSettings>(r#"{"shopName": "X"}"#).is_err(), "a full replacement");
    }
}
