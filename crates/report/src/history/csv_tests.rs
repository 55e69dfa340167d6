//! Tests of the CSV series reader: grouping, times, quoting and every refusal.

use super::*;

fn req(metric: &str) -> CsvRequest<'_> {
    CsvRequest { metric, ..CsvRequest::default() }
}

#[test]
fn rows_with_one_time_and_attributes_are_one_run() {
    let text = "time,commit,tput,lat\n20,b,11,1\n10,a,10,1\n10,a,10.5,2\n20,b,11.5,1\n";
    let s = parse(text, &req("tput")).unwrap();
    assert_eq!(s.runs.len(), 2);
    assert_eq!(s.runs[0].time_text, "10");
    assert_eq!(s.runs[0].values, vec![10.0, 10.5]);
    assert_eq!(s.runs[0].attributes, vec![("commit".to_string(), "a".to_string())]);
    assert_eq!(s.runs[1].values, vec![11.0, 11.5]);
    assert_eq!(s.runs[1].line, 2);
}

#[test]
fn iso_times_with_zones_order_the_runs() {
    let text = "when,v\n2026-11-29T10:00:00+02:00,1\n2026-11-29 09:00:00Z,2\n2026-11-28,3\n";
    let s = parse(text, &CsvRequest { metric: "v", time_column: Some("when"), attributes: &[] }).unwrap();
    let order: Vec<&str> = s.runs.iter().map(|r| r.time_text.as_str()).collect();
    assert_eq!(order, ["2026-11-28", "2026-11-29T10:00:00+02:00", "2026-11-29 09:00:00Z"]);
    assert_eq!(parse_time("1970-01-02"), Some(86400.0));
    assert_eq!(parse_time("2000-03-01T00:00:00.5Z"), Some(951_868_800.5));
    assert_eq!(parse_time("1700000000"), Some(1.7e9));
    for bad in ["2026-02-30", "2026-13-01", "yesterday", "2026-1-1", "2026-11-29T25:00", "nan"] {
        assert_eq!(parse_time(bad), None, "{bad}");
    }
}

#[test]
fn quoted_fields_and_crlf() {
    let text = "time,\"note, long\",v\r\n1,\"a \"\"x\"\", b\",5\r\n2,c,6\r\n";
    let s = parse(text, &req("v")).unwrap();
    assert_eq!(s.runs[0].attributes[0], ("note, long".to_string(), "a \"x\", b".to_string()));
    assert_eq!(s.runs[1].values, vec![6.0]);
}

#[test]
fn numeric_columns_are_other_metrics_unless_named_attributes() {
    let text = "time,build,v,w\n1,811,5,9\n1,812,6,9\n";
    // build is numeric: taken for a metric, so both rows are one run at time 1 — too few runs.
    assert!(matches!(parse(text, &req("v")), Err(CsvError::TooFewRuns(1, _))));
    let attrs = vec!["build".to_string()];
    let s = parse(text, &CsvRequest { metric: "v", time_column: None, attributes: &attrs }).unwrap();
    assert_eq!(s.runs.len(), 2);
    assert_eq!(s.runs[1].attributes, vec![("build".to_string(), "812".to_string())]);
}

#[test]
fn empty_metric_cells_are_counted_not_refused() {
    let s = parse("time,v\n1,5\n2,\n2,7\n3,8\n", &req("v")).unwrap();
    assert_eq!((s.runs.len(), s.empty_cells), (3, 1));
}

#[test]
fn every_refusal_says_where() {
    let cases: &[(&str, &str)] = &[
        ("", "empty"),
        ("\n", "empty"),
        ("1,2\n3,4\n", "line 1: the first row looks like data"),
        ("time,v,v\n1,2,3\n", "line 1, column 3: column name \"v\" appears twice"),
        ("time,x\n1,2\n", "no column \"v\" (the metric); the columns are: time, x"),
        ("t,v\n1,2\n", "no column \"time\" (the time column)"),
        ("time,v\n1,2\n2,abc\n", "line 3, column 2 (v): \"abc\" is not a number"),
        ("time,v\n1,2\n2,inf\n", "line 3, column 2 (v): \"inf\" is not a number"),
        ("time,v\nnoon,2\n", "line 2, column 1 (time): \"noon\" is not a time"),
        ("time,v\n1,2,3\n", "line 2: 3 fields, the header has 2"),
        ("time,v\n1,\"2\n", "line 2: a quoted field is not closed"),
        ("time,v\n1,2\n", "the series has 1 run(s) with a value of v; history needs at least 2"),
        ("time,v\n1,\n2,\n", "the series has 0 run(s)"),
    ];
    for (text, want) in cases {
        let err = parse(text, &req("v")).unwrap_err().to_string();
        assert!(err.contains(want), "{text:?}: {err}");
    }
    let attrs = vec!["nope".to_string()];
    let err = parse("time,v\n1,2\n", &CsvRequest { metric: "v", time_column: None, attributes: &attrs });
    assert!(err.unwrap_err().to_string().contains("no column \"nope\" (the attribute)"));
}

proptest::proptest! {
    #[test]
    fn any_text_is_read_or_refused_without_panic(text in "[a-z0-9,\"\\n\\r .:TZ+-]{0,200}") {
        let _ = parse(&text, &req("v"));
    }
}
