//! Lays out a one-run report: header, per workload a table of medians and spread over
//! repetitions (throughput, CPU per unit total/kernel/user), then the environment.

use crate::compare::layout::side_line;
use crate::model::{outlier_note, qos_note, shown, Metric};
use crate::quality::{exclusivity_line, noisy_legend, noisy_lines, noisy_note, BELOW_RES, NOISY_MARK};
use crate::render::doc::{Block, Cell, Grid, Tone};
use crate::render::units::{num, unit_view};
use crate::run::report::{RunReport, RunRow, RunTable};

fn header(t: &RunTable) -> Vec<String> {
    let u = unit_view(t.unit);
    let mut h: Vec<String> = if t.columns.is_empty() { vec!["point".into()] } else { t.columns.clone() };
    h.push("n".into());
    h.push(format!("throughput {}", u.tput_label));
    h.push("cv %".into());
    for m in &Metric::ALL[1..] {
        h.push(format!("{} {}", m.header(), u.cpu_label));
    }
    h.push("note".into());
    h
}

fn row_cells(t: &RunTable, r: &RunRow) -> Vec<Cell> {
    let u = unit_view(t.unit);
    let mut out: Vec<Cell> = if t.columns.is_empty() {
        vec![Cell::plain("all")]
    } else {
        t.columns.iter().map(|c| Cell::plain(r.params.get(c).map_or("-".into(), |v| shown(c, v)))).collect()
    };
    let n = if r.noisy_reps.is_empty() { r.n.to_string() } else { format!("{}{NOISY_MARK}", r.n) };
    out.push(Cell::toned(n, if r.noisy_reps.is_empty() { Tone::Plain } else { Tone::Muted }));
    let shown = |m: Metric, scale: f64| -> Cell {
        if r.below.contains(&m) {
            return Cell::toned(BELOW_RES, Tone::Muted);
        }
        Cell::plain(r.metric(m).map_or("n/a".into(), |s| num(s.median * scale)))
    };
    let tput = r.metric(Metric::Throughput);
    out.push(shown(Metric::Throughput, u.tput_scale));
    let cv = tput.and_then(|s| s.cv());
    out.push(Cell::toned(
        cv.map_or("n/a".into(), |v| format!("{:.1}", v * 100.0)),
        if r.noisy { Tone::Worse } else { Tone::Plain },
    ));
    for m in &Metric::ALL[1..] {
        out.push(shown(*m, u.cpu_scale));
    }
    let failed = if r.not_ok > 0 { format!("{} reps failed", r.not_ok) } else { String::new() };
    let note = [
        failed,
        noisy_note("", &r.noisy_reps),
        outlier_note(&r.outlier_reps),
        qos_note("", &r.qos_failed_reps),
    ]
    .into_iter()
    .filter(|x| !x.is_empty())
    .collect::<Vec<_>>()
    .join("; ");
    let tone = if note.is_empty() { Tone::Plain } else { Tone::Worse };
    out.push(Cell::toned(note, tone));
    out
}

/// The document of a one-run report; `chart` adds charts after each workload's table.
pub fn run_doc(r: &RunReport, chart: &dyn Fn(&RunTable) -> Vec<String>) -> Vec<Block> {
    let mut doc = vec![
        Block::Heading(1, format!("racehorse report: {}", r.side.name)),
        Block::Para(side_line("run", &r.side)),
    ];
    doc.extend(exclusivity_line(&r.side.run_name(), &r.side.exclusivity_warnings).map(Block::Para));
    if let Some(q) = r.side.outside_cpu {
        doc.push(Block::Para(format!("CPU used by other processes per measured window: {}.", q.text())));
    }
    doc.push(Block::Para(format!(
        "Medians over repetitions; CPU per unit of work is system-wide CPU (user + kernel) over the \
         measured window divided by the units of work. n{NOISY_MARK} = noisy: other processes used the \
         CPU during a repetition (listed under the table). {BELOW_RES} = below the measurement's \
         resolution, no figure. outlier #n = a repetition whose throughput lies far from the others' \
         median; kept in every figure."
    )));
    for t in &r.tables {
        doc.push(Block::Heading(2, format!("{} — {}", t.title(), t.area)));
        let u = unit_view(t.unit);
        let mut caption =
            format!("{}: throughput in {}, CPU per unit in {}", t.title(), u.tput_label, u.cpu_label);
        if !t.constant.is_empty() {
            let fixed: Vec<String> = t.constant.iter().map(|(k, v)| format!("{k}={}", shown(k, v))).collect();
            caption.push_str(&format!("; fixed: {}", fixed.join(" ")));
        }
        let mut g = Grid::new("run", caption, header(t), t.columns.len().max(1));
        g.rows = t.rows.iter().map(|row| row_cells(t, row)).collect();
        doc.push(Block::Table(g));
        let lines = t.rows.iter().flat_map(|row| noisy_legend(&row.label, "", &row.noisy_reps)).collect();
        doc.extend(noisy_lines(lines).into_iter().map(Block::Para));
        doc.extend(chart(t).into_iter().map(Block::Chart));
    }
    doc.push(Block::Heading(2, "Environment".into()));
    let mut g = Grid::new("env", "", vec!["key".into(), "value".into()], 2);
    g.rows = r.env.iter().map(|(k, v)| vec![Cell::plain(k), Cell::plain(v)]).collect();
    doc.push(Block::Table(g));
    doc
}
