//! Tests of the change-point ledger.

use super::*;

pub(crate) fn record(uuid: &str) -> ChangePointRecord {
    ChangePointRecord {
        id: 0,
        uuid: uuid.into(),
        series_key: "h|null|default||throughput".into(),
        host: "h".into(),
        workload: "null".into(),
        variant: "default".into(),
        params_json: "{}".into(),
        figure: "throughput".into(),
        unit: "ops/s".into(),
        before_run_uuid: "b".into(),
        after_run_uuid: "a".into(),
        level_before: 100.0,
        level_after: 90.0,
        ratio: 0.9,
        ratio_lo: Some(0.88),
        ratio_hi: Some(0.92),
        p_value: 0.005,
        direction: "worse".into(),
        status: LedgerStatus::New,
        reason: None,
        link: None,
        detected_at_unix_s: 1_700_000_000,
        updated_at_unix_s: 0,
    }
}

#[test]
fn a_point_is_saved_updated_and_acknowledged() {
    let s = Store::open_in_memory().unwrap();
    let id = s.save_change_point(&record("u1")).unwrap();
    let mut got = s.change_point(id).unwrap().unwrap();
    assert_eq!((got.ratio, got.status), (0.9, LedgerStatus::New));
    got.ratio = 0.89;
    got.after_run_uuid = "a2".into();
    assert_eq!(s.save_change_point(&got).unwrap(), id);
    assert_eq!(s.change_points(None).unwrap().len(), 1);
    s.set_change_point_status(id, LedgerStatus::Acknowledged, Some("expected: new GC"), Some("https://x/1"))
        .unwrap();
    let got = s.change_point(id).unwrap().unwrap();
    assert_eq!((got.ratio, got.after_run_uuid.as_str()), (0.89, "a2"));
    assert_eq!(got.status, LedgerStatus::Acknowledged);
    assert_eq!(got.reason.as_deref(), Some("expected: new GC"));
    assert!(matches!(
        s.set_change_point_status(99, LedgerStatus::Hidden, None, None),
        Err(StoreError::UnknownChangePoint(99))
    ));
    assert!(s.set_change_point_status(id, LedgerStatus::Hidden, Some("a\u{7}"), None).is_err());
}

#[test]
fn merging_takes_the_later_version() {
    let s = Store::open_in_memory().unwrap();
    let mut rec = record("u2");
    rec.updated_at_unix_s = 10;
    assert!(s.merge_change_point(&rec).unwrap());
    let stored = s.change_points(Some(&rec.series_key)).unwrap();
    assert_eq!(stored.len(), 1);
    // An older copy changes nothing; a newer one (acknowledged elsewhere) is taken.
    let older = ChangePointRecord { updated_at_unix_s: 1, status: LedgerStatus::Hidden, ..rec.clone() };
    assert!(!s.merge_change_point(&older).unwrap());
    let later_at = stored[0].updated_at_unix_s + 100;
    let newer = ChangePointRecord {
        updated_at_unix_s: later_at,
        status: LedgerStatus::Acknowledged,
        reason: Some("ok".into()),
        ..rec.clone()
    };
    assert!(s.merge_change_point(&newer).unwrap());
    let got = &s.change_points(None).unwrap()[0];
    assert_eq!(
        (got.status, got.reason.as_deref(), got.updated_at_unix_s),
        (LedgerStatus::Acknowledged, Some("ok"), later_at)
    );
    assert_eq!(s.change_points(None).unwrap().len(), 1);
}
