//! The remote's base URL: parsed once, and joined with operation paths segment by segment,
//! so a path prefix (`https://shop.example/petstore/`) and a trailing slash or its absence
//! all lead to the same request URLs.

use std::fmt;

use url::Url;

use crate::error::{Error, Result};

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct BaseUrl(Url);

impl BaseUrl {
    pub(crate) fn parse(raw: &str) -> Result<Self> {
        let raw = raw.trim();
        let invalid = |why: &str| Error::validation(format!("the base URL {raw:?} {why}"));
        if raw.is_empty() {
            return Err(Error::validation("the base URL is empty; give one like http://127.0.0.1:8787"));
        }
        let url = Url::parse(raw).map_err(|e| invalid(&format!("is not a valid URL ({e})")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("must start with http:// or https://"));
        }
        if url.host().is_none() {
            return Err(invalid("has no host name"));
        }
        // Credentials in a URL end up in logs and settings files; the key goes in a header.
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("must not contain a user name or password; the API key is given separately"));
        }
        // Every request sets its own query; a base query or fragment would be dropped or,
        // worse, silently merged into filters.
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("must not contain a query (?...) or fragment (#...)"));
        }
        Ok(Self(url))
    }

    /// Its origin: scheme, host and port, the default port left out
    /// (`https://shop-server.lan:8787`). Two addresses with the same origin reach the same
    /// server over the same protocol; a path below it does not matter.
    pub(crate) fn origin(&self) -> String {
        self.0.origin().ascii_serialization()
    }

    /// The URL of the operation at `segments` below the base, each segment percent-encoded
    /// on its own (so an id can never add a path level).
    pub(crate) fn join(&self, segments: &[&str]) -> Url {
        let mut url = self.0.clone();
        url.path_segments_mut().expect("http(s) URLs always have a path").pop_if_empty().extend(segments);
        url
    }
}

/// Shown as the user typed it, without the trailing slash the parser adds to a bare host.
impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str().trim_end_matches('/'))
    }
}

impl fmt::Debug for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn origin_of(address: &str) -> Option<String> {
        BaseUrl::parse(address).ok().map(|b| b.origin())
    }

    #[test]
    fn an_origin_is_the_scheme_host_and_port_of_an_http_address() {
        assert_eq!(origin_of("http://shop-server.lan:8787").as_deref(), Some("http://shop-server.lan:8787"));
        assert_eq!(
            origin_of(" HTTP://Shop-Server.LAN:8787/petstore/ ").as_deref(),
            Some("http://shop-server.lan:8787")
        );
        assert_eq!(origin_of("https://shop.example:443/api").as_deref(), Some("https://shop.example"));
        assert_ne!(origin_of("http://shop.example"), origin_of("https://shop.example"));
        assert_ne!(origin_of("http://shop.example:8787"), origin_of("http://shop.example:8788"));
        for not_http in ["", "shop.example", "ftp://shop.example", "file:///etc/passwd", "data:text/plain,x"]
        {
            assert_eq!(origin_of(not_http), None, "{not_http}");
        }
    }

    fn joined(base: &str, segments: &[&str]) -> String {
        BaseUrl::parse(base).unwrap().join(segments).to_string()
    }

    #[test]
    fn a_trailing_slash_makes_no_difference() {
        for base in ["http://127.0.0.1:8787", "http://127.0.0.1:8787/"] {
            assert_eq!(joined(base, &["pets"]), "http://127.0.0.1:8787/pets");
        }
        for base in ["https://shop.example/api/v1", "https://shop.example/api/v1/"] {
            assert_eq!(
                joined(base, &["store", "inventory", "7", "adjustments"]),
                "https://shop.example/api/v1/store/inventory/7/adjustments"
            );
        }
    }

    #[test]
    fn segments_are_encoded_and_cannot_escape_the_prefix() {
        // `.` and `..` are dropped by `url` rather than resolved.
        assert_eq!(joined("http://h/api", &["a/b", ".."]), "http://h/api/a%2Fb");
    }

    #[test]
    fn shown_without_the_added_slash() {
        assert_eq!(BaseUrl::parse("http://127.0.0.1:9").unwrap().to_string(), "http://127.0.0.1:9");
        assert_eq!(BaseUrl::parse(" https://h/p/ ").unwrap().to_string(), "https://h/p");
    }

    #[test]
    fn only_plain_http_and_https_urls_are_accepted() {
        for bad in [
            "",
            "localhost:8787",
            "127.0.0.1:8787",
            "ftp://h/",
            "file:///tmp/x",
            "http://",
            "http://user:pw@h/",
            "http://h/?api_key=x",
            "http://h/#top",
            "not a url",
        ] {
            let e = BaseUrl::parse(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::ValidationFailed, "{bad:?}");
            assert!(e.message.contains("base URL"), "{bad:?}: {}", e.message);
        }
    }
}
