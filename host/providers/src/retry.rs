//! When to try a model request again, and how long to wait first: exponential
//! backoff, or what the provider's `Retry-After` (or `retry-after-ms`) header
//! asks for, never longer than a ceiling.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How often and how patiently a provider retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// The wait before the second attempt; each later one waits twice as long.
    pub base_delay: Duration,
    /// The longest wait, whatever the provider asks for.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `next` (2 for the first retry), honouring the
    /// response's headers when it has any.
    pub(crate) fn delay(&self, next: u32, headers: Option<&HeaderMap>) -> Duration {
        let asked = headers.and_then(retry_after);
        let backoff = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(next.saturating_sub(2)));
        asked.unwrap_or(backoff).min(self.max_delay)
    }
}

/// What the provider asked for: `retry-after-ms`, or `Retry-After` in seconds
/// or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(millis) = text("retry-after-ms").and_then(|value| value.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(millis.max(0.0) / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Some(Duration::from_secs_f64(seconds.max(0.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn backoff_doubles_until_the_ceiling() {
        let policy = RetryPolicy {
            attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        };
        let waits: Vec<u128> = (2..=5).map(|n| policy.delay(n, None).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 350, 350]);
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_or_a_date_is_honoured() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(2, Some(&headers("retry-after", "3"))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(2, Some(&headers("retry-after-ms", "250"))),
            Duration::from_millis(250)
        );
        let soon = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let wait = policy.delay(2, Some(&headers("retry-after", &soon)));
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(
            policy.delay(2, Some(&headers("retry-after", "99999"))),
            policy.max_delay
        );
    }
}
