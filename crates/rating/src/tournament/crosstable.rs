//! Crosstables as text, JSON and CSV.
//!
//! Every format gets the Swiss-style table: one row per player in standings
//! order, then one cell per round naming the opponent by rank, the colour
//! (`r` Red, `b` Black) and the result (`1`, `½`, `0`; `?` while unplayed),
//! e.g. `3b½`. A game decided without play carries 21.4's marks, `3b+` and
//! `3r-` (a double forfeit, 21.3, is `-` in both rows); a game annulled by a withdrawal (20.3) is in parentheses. A
//! round-robin bye is `rest` (scores nothing), a Swiss bye `bye+` (scores as
//! a win without play), an elimination bye `bye`. Round robins additionally
//! get the classic player-against-player matrix in the text form, and group
//! events (11.3) every group's and the final's standings.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Format, PlayerId, Standing, Standings, Tournament};
use crate::GameResult;
use crate::result::Side;

/// One game (or bye) of a player, from that player's view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossEntry {
    pub round: u32,
    /// `None` for a bye.
    pub opponent: Option<PlayerId>,
    /// The opponent's rank in the standings.
    pub opponent_rank: Option<usize>,
    /// `true` if the player had Red; `None` for a bye.
    pub red: Option<bool>,
    /// `None` while the game is unplayed and for a bye.
    pub result: Option<GameResult>,
    /// Decided without play (21.4).
    #[serde(default)]
    pub forfeit: bool,
    /// Annulled by a withdrawal (20.3).
    #[serde(default)]
    pub cancelled: bool,
}

impl CrossEntry {
    /// The result as shown: `1`, `½`, `0`, `?`, or 21.4's `+` / `-` for a
    /// game decided without play; in parentheses when annulled (20.3).
    fn mark(&self) -> String {
        let mark = match (self.forfeit, self.result) {
            (true, Some(GameResult::Win)) => "+",
            (true, Some(GameResult::Loss)) => "-",
            (_, r) => result_symbol(r),
        };
        if self.cancelled {
            format!("({mark})")
        } else {
            mark.to_owned()
        }
    }

    fn cell(&self, format: &Format) -> String {
        match (self.opponent_rank, self.red) {
            (Some(rank), Some(red)) => {
                let colour = if red { 'r' } else { 'b' };
                if self.cancelled {
                    // The whole cell in parentheses: "(3r1)".
                    let plain = CrossEntry {
                        cancelled: false,
                        ..self.clone()
                    };
                    format!("({rank}{colour}{})", plain.mark())
                } else {
                    format!("{rank}{colour}{}", self.mark())
                }
            }
            _ => match format {
                Format::RoundRobin { .. } | Format::Groups { .. } => "rest".to_owned(),
                Format::Swiss { .. } => "bye+".to_owned(),
                Format::Knockout { .. } | Format::DoubleElimination { .. } => "bye".to_owned(),
            },
        }
    }
}

/// `1`, `½`, `0`, or `?` while unplayed.
pub(crate) fn result_symbol(r: Option<GameResult>) -> &'static str {
    match r {
        Some(GameResult::Win) => "1",
        Some(GameResult::Draw) => "½",
        Some(GameResult::Loss) => "0",
        None => "?",
    }
}

/// A score as text: `2`, `2.5`, `2.25`.
pub(crate) fn number(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else if (x * 2.0).fract() == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A player's row: the standing plus the games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrosstableRow {
    pub rank: usize,
    pub player: PlayerId,
    pub name: String,
    pub points: f64,
    pub tiebreaks: Vec<f64>,
    pub entries: Vec<CrossEntry>,
}

/// A stage's standings (a group or the final of 11.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageTable {
    pub name: String,
    pub standings: Standings,
}

/// The whole crosstable; serialize it with serde for JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Crosstable {
    pub name: String,
    pub format: Format,
    /// The event seed (colour lots, draws of lots).
    #[serde(default)]
    pub seed: u64,
    pub rounds: u32,
    pub standings: Standings,
    pub rows: Vec<CrosstableRow>,
    /// Group events (11.3): each group, then the final once drawn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageTable>,
}

/// Lines up `body` under `headers`: the second column left-aligned, the
/// others right-aligned, two spaces apart.
pub(crate) fn aligned(headers: &[String], body: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in body {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(i, (c, &w))| {
                let pad = w - c.chars().count();
                if i == 1 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", line(headers));
    for row in body {
        let _ = writeln!(out, "{}", line(row));
    }
    out
}

/// `body` under `headers` as CSV, each field quoted as RFC 4180 asks.
pub(crate) fn csv(headers: &[String], body: &[Vec<String>]) -> String {
    let quote = |s: &String| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.clone()
        }
    };
    let mut out = String::new();
    for row in std::iter::once(headers).chain(body.iter().map(Vec::as_slice)) {
        out.push_str(&row.iter().map(quote).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// The leading columns of every table of standings: rank, `name` (the entrant's
/// kind, "Name" or "Team"), the primary score and the tie-breaks.
pub(crate) fn standing_headers(standings: &Standings, name: &str) -> Vec<String> {
    let mut h = vec![
        "Rank".to_owned(),
        name.to_owned(),
        standings.primary.label().to_owned(),
    ];
    h.extend(standings.tiebreaks.iter().map(|tb| tb.label().to_owned()));
    h
}

/// The cells under [`standing_headers`] for one entrant.
pub(crate) fn standing_cells(
    rank: usize,
    name: &str,
    points: f64,
    tiebreaks: &[f64],
) -> Vec<String> {
    let mut c = vec![rank.to_string(), name.to_owned(), number(points)];
    c.extend(tiebreaks.iter().map(|&v| number(v)));
    c
}

/// A stage's standings as text: rank, name, points and tie-breaks.
fn standings_text(s: &Standings) -> String {
    let body: Vec<Vec<String>> = s
        .rows
        .iter()
        .map(|r: &Standing| standing_cells(r.rank, &r.name, r.points, &r.tiebreaks))
        .collect();
    aligned(&standing_headers(s, "Name"), &body)
}

pub(super) fn build(t: &Tournament) -> Crosstable {
    let standings = t.standings();
    let rank_of = |p: PlayerId| standings.of(p).map(|s| s.rank);
    let mut rows: Vec<CrosstableRow> = standings
        .rows
        .iter()
        .map(|s| CrosstableRow {
            rank: s.rank,
            player: s.player,
            name: s.name.clone(),
            points: s.points,
            tiebreaks: s.tiebreaks.clone(),
            entries: Vec::new(),
        })
        .collect();
    let row_of: Vec<usize> = {
        let mut v = vec![0; t.participants().len()];
        for (i, r) in rows.iter().enumerate() {
            v[r.player] = i;
        }
        v
    };
    for g in t.games() {
        let p = &g.pairing;
        for (me, opp, red) in [(p.red, p.black, true), (p.black, p.red, false)] {
            rows[row_of[me]].entries.push(CrossEntry {
                round: p.round,
                opponent: Some(opp),
                opponent_rank: rank_of(opp),
                red: Some(red),
                result: g.result.map(|r| r.for_side(Side::red_if(red))),
                forfeit: g.forfeit,
                cancelled: g.cancelled,
            });
        }
    }
    for bye in t.byes() {
        rows[row_of[bye.player]].entries.push(CrossEntry {
            round: bye.round,
            opponent: None,
            opponent_rank: None,
            red: None,
            result: None,
            forfeit: false,
            cancelled: false,
        });
    }
    for row in &mut rows {
        row.entries.sort_by_key(|e| e.round);
    }
    let stages = t
        .groups()
        .map(|g| {
            let mut v: Vec<StageTable> = g
                .groups
                .into_iter()
                .enumerate()
                .map(|(i, standings)| StageTable {
                    name: format!("Group {}", i + 1),
                    standings,
                })
                .collect();
            if let Some(standings) = g.final_standings {
                v.push(StageTable {
                    name: "Final".to_owned(),
                    standings,
                });
            }
            v
        })
        .unwrap_or_default();
    Crosstable {
        name: t.config().name.clone(),
        format: t.config().format,
        seed: t.config().seed,
        rounds: t.rounds_played(),
        standings,
        rows,
        stages,
    }
}

impl Crosstable {
    /// Cells of a row grouped by round (a knockout round may hold several
    /// games, joined with spaces).
    fn round_cells(&self, row: &CrosstableRow) -> Vec<String> {
        (1..=self.rounds)
            .map(|r| {
                row.entries
                    .iter()
                    .filter(|e| e.round == r)
                    .map(|e| e.cell(&self.format))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// Column headers shared by text and CSV.
    fn headers(&self) -> Vec<String> {
        let mut h = standing_headers(&self.standings, "Name");
        h.extend((1..=self.rounds).map(|r| format!("R{r}")));
        h
    }

    /// The table's rows, shared by text and CSV.
    fn body(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|row| {
                let mut c = standing_cells(row.rank, &row.name, row.points, &row.tiebreaks);
                c.extend(self.round_cells(row));
                c
            })
            .collect()
    }

    /// Aligned plain-text table (plus, for round robins, the result matrix).
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if !self.name.is_empty() {
            let _ = writeln!(out, "{}", self.name);
        }
        out.push_str(&aligned(&self.headers(), &self.body()));
        for stage in &self.stages {
            let _ = write!(
                out,
                "\n{}\n{}",
                stage.name,
                standings_text(&stage.standings)
            );
        }
        if matches!(self.format, Format::RoundRobin { .. }) {
            out.push('\n');
            out.push_str(&self.matrix_text());
        }
        out
    }

    /// Round-robin matrix: row player's results against each column player
    /// (by rank order), `X` on the diagonal, two symbols per cell in a
    /// double round robin.
    fn matrix_text(&self) -> String {
        let n = self.rows.len();
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            return "X".to_owned();
                        }
                        let opp = self.rows[j].player;
                        let s: String = row
                            .entries
                            .iter()
                            .filter(|e| e.opponent == Some(opp))
                            .map(CrossEntry::mark)
                            .collect();
                        if s.is_empty() { ".".to_owned() } else { s }
                    })
                    .collect()
            })
            .collect();
        let name_w = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0);
        let cell_w = cells
            .iter()
            .flatten()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(1)
            .max(n.to_string().len());
        let mut out = format!("{:>4}  {:<name_w$}", "", "");
        for j in 1..=n {
            let _ = write!(out, "  {j:>cell_w$}");
        }
        out.push('\n');
        for (i, row) in self.rows.iter().enumerate() {
            let pad = name_w - row.name.chars().count();
            let _ = write!(out, "{:>4}  {}{}", i + 1, row.name, " ".repeat(pad));
            for c in &cells[i] {
                let p = cell_w - c.chars().count();
                let _ = write!(out, "  {}{c}", " ".repeat(p));
            }
            let _ = writeln!(out, "  {:>5}", number(row.points));
        }
        out
    }

    /// CSV (RFC 4180 quoting) with the same columns as the text table.
    #[must_use]
    pub fn to_csv(&self) -> String {
        csv(&self.headers(), &self.body())
    }

    /// Pretty-printed JSON of the whole table.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self)
            .expect("crosstable serializes: plain data, finite or not")
    }
}
