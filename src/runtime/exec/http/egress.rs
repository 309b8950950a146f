//! Where an HTTP tool may connect: its hosts, checked before the request, on every redirect and
//! in the resolver, which hands the connector only addresses it checked — so a name that
//! resolves to a public address when checked cannot reach a private one when connected (DNS
//! rebinding), since there is no second lookup.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::ir::http::host_matches;

/// Why a destination was refused.
#[derive(Debug, thiserror::Error)]
pub enum EgressRefused {
    /// The host is not one the tool may reach.
    #[error(
        "`{host}` is not a host this tool may reach (allowed: {allowed}); declare it in the tool's `exec.http.hosts` or in `network.allow` of toolgate.yaml"
    )]
    Host {
        /// The host.
        host: String,
        /// The allowed hosts, listed.
        allowed: String,
    },
    /// The host resolves to (or is) a loopback, private or link-local address.
    #[error(
        "`{host}` resolves to {addr}, a {kind} address; a host may reach such addresses only when listed in `network.allow_private` of toolgate.yaml"
    )]
    Private {
        /// The host.
        host: String,
        /// The address.
        addr: IpAddr,
        /// loopback, private, link-local, …
        kind: &'static str,
    },
    /// The name did not resolve.
    #[error("`{host}` could not be resolved: {message}")]
    Unresolved {
        /// The host.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The redirect chain is too long.
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    /// A redirect left http(s).
    #[error("a redirect to `{0}` left http(s)")]
    Scheme(String),
}

/// The hosts one tool may reach, and those that may be private.
#[derive(Clone, Debug)]
pub struct Egress {
    allowed: Vec<String>,
    private_ok: Vec<String>,
}

/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 10;

impl Egress {
    /// The tool's hosts (its URL's, its `hosts`) and the project's `network` lists.
    pub fn new(allowed: Vec<String>, private_ok: Vec<String>) -> Self {
        Egress {
            allowed,
            private_ok,
        }
    }

    /// Checks a host name (or IP literal) against the allowed hosts, and an IP literal against
    /// the private ranges.
    pub fn check_host(&self, host: &str) -> Result<(), EgressRefused> {
        if !self.allowed.iter().any(|p| host_matches(p, host)) {
            return Err(EgressRefused::Host {
                host: host.to_owned(),
                allowed: self.allowed.join(", "),
            });
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.check_addr(host, ip)?;
        }
        Ok(())
    }

    /// Checks a resolved address of `host`.
    pub fn check_addr(&self, host: &str, ip: IpAddr) -> Result<(), EgressRefused> {
        match non_public(ip) {
            Some(kind) if !self.private_ok.iter().any(|p| host_matches(p, host)) => {
                Err(EgressRefused::Private {
                    host: host.to_owned(),
                    addr: ip,
                    kind,
                })
            }
            _ => Ok(()),
        }
    }

    /// Checks a URL's scheme and host.
    pub fn check_url(&self, url: &reqwest::Url) -> Result<(), EgressRefused> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(EgressRefused::Scheme(url.to_string()));
        }
        match url.host_str() {
            Some(h) => self.check_host(h),
            None => Err(EgressRefused::Scheme(url.to_string())),
        }
    }

    /// The redirect policy: follow only to hosts this tool may reach.
    pub fn redirect_policy(self: &Arc<Self>) -> reqwest::redirect::Policy {
        let egress = Arc::clone(self);
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(EgressRefused::TooManyRedirects(MAX_REDIRECTS));
            }
            match egress.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(e) => attempt.error(e),
            }
        })
    }
}

/// The kind of a loopback, private, link-local or otherwise non-public address.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() || (o[0] == 100 && (64..128).contains(&o[1])) {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || o[0] == 0 {
                Some("non-routable")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return non_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if (s[0] & 0xfe00) == 0xfc00 {
                Some("private")
            } else if (s[0] & 0xffc0) == 0xfe80 {
                Some("link-local")
            } else if v6.is_unspecified() || v6.is_multicast() {
                Some("non-routable")
            } else {
                None
            }
        }
    }
}

/// The resolver of one tool's client: looks a name up once, refuses hosts the tool may not
/// reach and names with any non-public address (unless allowed), and returns exactly the
/// addresses it checked for the connector to use.
#[derive(Clone, Debug)]
pub struct CheckedResolver {
    egress: Arc<Egress>,
}

impl CheckedResolver {
    /// A resolver for one tool.
    pub fn new(egress: Arc<Egress>) -> Self {
        CheckedResolver { egress }
    }
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let egress = Arc::clone(&self.egress);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            egress.check_host(&host)?;
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| EgressRefused::Unresolved {
                    host: host.clone(),
                    message: e.to_string(),
                })?
                .collect();
            if addrs.is_empty() {
                return Err(EgressRefused::Unresolved {
                    host,
                    message: "no addresses".into(),
                }
                .into());
            }
            // A name with any non-public address is refused whole: a mixed answer is how a
            // rebinding name slips an internal address in beside a public one.
            for a in &addrs {
                egress.check_addr(&host, a.ip())?;
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The egress refusal in an error's source chain, if that is why it failed.
pub fn refusal<'e>(err: &'e (dyn std::error::Error + 'static)) -> Option<&'e EgressRefused> {
    let mut cur: Option<&'e (dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(r) = e.downcast_ref::<EgressRefused>() {
            return Some(r);
        }
        cur = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn egress(private_ok: &[&str]) -> Egress {
        Egress::new(
            vec![
                "api.example.com".into(),
                "127.0.0.1".into(),
                "localhost".into(),
            ],
            private_ok.iter().map(|s| (*s).to_owned()).collect(),
        )
    }

    #[test]
    fn hosts_and_ranges() {
        let e = egress(&[]);
        assert!(e.check_host("api.example.com").is_ok());
        assert!(matches!(
            e.check_host("evil.example.net"),
            Err(EgressRefused::Host { .. })
        ));
        assert!(matches!(
            e.check_host("127.0.0.1"),
            Err(EgressRefused::Private {
                kind: "loopback",
                ..
            })
        ));
        assert!(egress(&["127.0.0.1"]).check_host("127.0.0.1").is_ok());
        for (ip, kind) in [
            ("10.1.2.3", "private"),
            ("192.168.0.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "private"),
            ("::1", "loopback"),
            ("fd00::1", "private"),
            ("fe80::1", "link-local"),
            ("::ffff:127.0.0.1", "loopback"),
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(non_public(ip), Some(kind), "{ip}");
        }
        assert_eq!(non_public("93.184.216.34".parse().unwrap()), None);
    }

    #[tokio::test]
    async fn resolver_refuses_a_name_of_loopback() {
        let r = CheckedResolver::new(Arc::new(egress(&[])));
        let err = r
            .resolve("localhost".parse::<Name>().unwrap())
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("loopback"), "{err}");
        let ok = CheckedResolver::new(Arc::new(egress(&["localhost"])));
        assert!(
            ok.resolve("localhost".parse::<Name>().unwrap())
                .await
                .is_ok()
        );
    }
}
