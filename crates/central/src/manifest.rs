//! The campaign manifest the Ansible collect play writes: which hosts the campaign meant to
//! run on and how each ended, so that a host without a run is visible, not silently absent.
//! `{"format": "racehorse-campaign", "version": 1, "campaign": ID, "started_at_unix_s": N,
//! "hosts": [{"name": H, "outcome": "ok" | "unreachable" | "failed", "detail": TEXT}]}`.

use serde_json::Value as Json;

/// The `format` of a campaign manifest.
pub const MANIFEST_FORMAT: &str = "racehorse-campaign";
/// The manifest version this racehorse reads.
pub const MANIFEST_VERSION: u64 = 1;

/// How a host's part of the campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Ansible could not reach it (ssh).
    Unreachable,
    /// A task failed on it.
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Unreachable => "unreachable",
            Outcome::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Ok, Outcome::Unreachable, Outcome::Failed].into_iter().find(|o| o.as_str() == s)
    }
}

/// One host of the campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostOutcome {
    /// Its inventory name (the runs' `inventory_name`).
    pub name: String,
    pub outcome: Outcome,
    /// What went wrong (Ansible's message), or empty.
    pub detail: String,
}

/// A campaign manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub campaign: String,
    pub started_at_unix_s: Option<i64>,
    pub hosts: Vec<HostOutcome>,
}

/// Why a manifest cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error(
        "campaign manifest version {0} is not known to this racehorse (it reads version 1); \
         load it with a newer racehorse"
    )]
    UnknownVersion(String),
    #[error("not a campaign manifest: {0}")]
    Invalid(String),
}

fn invalid(why: impl Into<String>) -> ManifestError {
    ManifestError::Invalid(why.into())
}

fn host(i: usize, h: &Json) -> Result<HostOutcome, ManifestError> {
    let name = h["name"].as_str().ok_or_else(|| invalid(format!("hosts[{i}].name: missing or not text")))?;
    if let Some(why) = racehorse_store::fleet::name_problem("the host name", name) {
        return Err(invalid(format!("hosts[{i}].name: {why}")));
    }
    let outcome = h["outcome"]
        .as_str()
        .and_then(Outcome::parse)
        .ok_or_else(|| invalid(format!("hosts[{i}].outcome: one of ok, unreachable, failed")))?;
    let detail = match &h["detail"] {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        _ => return Err(invalid(format!("hosts[{i}].detail: not text"))),
    };
    Ok(HostOutcome { name: name.to_string(), outcome, detail })
}

/// Reads a manifest's text.
pub fn parse_manifest(text: &str) -> Result<Manifest, ManifestError> {
    let doc: Json = serde_json::from_str(text).map_err(|e| invalid(format!("not JSON: {e}")))?;
    if doc["format"] != MANIFEST_FORMAT {
        return Err(invalid(format!("its \"format\" is {}, not \"{MANIFEST_FORMAT}\"", doc["format"])));
    }
    if doc["version"] != MANIFEST_VERSION {
        return Err(ManifestError::UnknownVersion(doc["version"].to_string()));
    }
    let campaign = doc["campaign"].as_str().ok_or_else(|| invalid("campaign: missing or not text"))?;
    if let Some(why) = racehorse_store::fleet::name_problem("campaign", campaign) {
        return Err(invalid(why));
    }
    let started_at_unix_s = match &doc["started_at_unix_s"] {
        Json::Null => None,
        v => Some(v.as_i64().ok_or_else(|| invalid("started_at_unix_s: not an integer"))?),
    };
    let list = doc["hosts"].as_array().ok_or_else(|| invalid("hosts: missing or not a list"))?;
    let hosts = list.iter().enumerate().map(|(i, h)| host(i, h)).collect::<Result<Vec<_>, _>>()?;
    for (i, h) in hosts.iter().enumerate() {
        if hosts[..i].iter().any(|o| o.name == h.name) {
            return Err(invalid(format!("host '{}' is listed twice", h.name)));
        }
    }
    Ok(Manifest { campaign: campaign.to_string(), started_at_unix_s, hosts })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"format":"racehorse-campaign","version":1,"campaign":"c1","started_at_unix_s":1800000000,
        "hosts":[{"name":"h1","outcome":"ok","detail":""},{"name":"h2","outcome":"unreachable","detail":"ssh: refused"},
                 {"name":"h3","outcome":"failed"}]}"#;

    #[test]
    fn reads_every_host_and_its_outcome() {
        let m = parse_manifest(GOOD).unwrap();
        assert_eq!((m.campaign.as_str(), m.started_at_unix_s), ("c1", Some(1_800_000_000)));
        let outcomes: Vec<_> =
            m.hosts.iter().map(|h| (h.name.as_str(), h.outcome, h.detail.as_str())).collect();
        assert_eq!(
            outcomes,
            [
                ("h1", Outcome::Ok, ""),
                ("h2", Outcome::Unreachable, "ssh: refused"),
                ("h3", Outcome::Failed, "")
            ]
        );
    }

    #[test]
    fn refuses_other_versions_formats_and_bad_hosts() {
        let v2 = GOOD.replace("\"version\":1", "\"version\":2");
        assert_eq!(parse_manifest(&v2), Err(ManifestError::UnknownVersion("2".into())));
        assert!(parse_manifest(&GOOD.replace("racehorse-campaign", "racehorse-run")).is_err());
        let bad = GOOD.replace("\"unreachable\"", "\"lost\"");
        assert!(parse_manifest(&bad).unwrap_err().to_string().contains("hosts[1].outcome"), "{bad}");
        let twice = GOOD.replace("\"h3\"", "\"h1\"");
        assert!(parse_manifest(&twice).unwrap_err().to_string().contains("listed twice"));
        assert!(parse_manifest(&GOOD.replace("\"c1\"", "\"\"")).is_err(), "an empty campaign id");
        assert!(parse_manifest("{").is_err());
        let no_start = GOOD.replace("\"started_at_unix_s\":1800000000,", "");
        assert_eq!(parse_manifest(&no_start).unwrap().started_at_unix_s, None);
    }
}
