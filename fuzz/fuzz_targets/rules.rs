//! Fuzz target: cpuplugd config and expression parsing must return Ok or a positioned error,
//! never panic; whatever parses must re-parse from its parenthesised form to the same tree.
#![no_main]
use libfuzzer_sys::fuzz_target;
use racehorse_rules::{parse_config, parse_expr};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(expr) = parse_expr(text, &[]) {
        let again = parse_expr(&expr.parenthesised(), &[]).expect("parenthesised form re-parses");
        assert_eq!(again, expr);
    }
    match parse_config(text) {
        Ok(cfg) => {
            for (_, rule) in cfg.rules() {
                let again = parse_expr(&rule.text, &cfg.vars).expect("a loaded rule re-parses");
                assert_eq!(again, rule.expr);
            }
            assert!(cfg.history_depth() >= 1 && cfg.history_depth() <= racehorse_rules::MAX_HISTORY);
        }
        Err(e) => assert!(e.line >= 1 && e.column >= 1),
    }
});
