//! The plot layout: which signals are in which plot. Persisted between runs by name, so a
//! layout carries over to another recording with the same topics.

use serde::{Deserialize, Serialize};

use crate::data::derived::{DERIVED_TOPIC, DerivedSpec};

/// One plotted signal: a topic's numeric leaf.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SignalRef {
    /// Topic name.
    pub topic: String,
    /// Leaf path within the topic's messages.
    pub path: String,
}

impl SignalRef {
    /// `topic/path`, as the legend shows it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.topic, self.path)
    }
}

/// One plot of the stack: signals against time, or (with `x`) against another signal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlotSpec {
    /// Its signals, drawn in this order (on the y axis).
    pub signals: Vec<SignalRef>,
    /// An XY plot's x signal (`None`: a time plot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<SignalRef>,
    /// An XY plot keeps one unit on both axes the same length (a map).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub equal_axes: bool,
}

impl PlotSpec {
    /// A time plot of `signals`.
    pub fn of(signals: Vec<SignalRef>) -> Self {
        PlotSpec {
            signals,
            ..PlotSpec::default()
        }
    }
}

/// The stack of plots, and the derived signals they may show.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Top to bottom.
    pub plots: Vec<PlotSpec>,
    /// Derived signals, in the order they are evaluated (each may read those before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<DerivedSpec>,
}

impl Layout {
    /// Adds `signal` to plot `plot` (a new plot when out of range); no duplicates within a plot.
    pub fn add(&mut self, plot: Option<usize>, signal: SignalRef) {
        let index = match plot {
            Some(i) if i < self.plots.len() => i,
            _ => {
                self.plots.push(PlotSpec::default());
                self.plots.len() - 1
            }
        };
        if let Some(p) = self.plots.get_mut(index)
            && !p.signals.contains(&signal)
        {
            p.signals.push(signal);
        }
    }

    /// Keeps only the signals `present` accepts, and the plots left with any; returns how many
    /// signals were dropped. A layout saved for another recording keeps what still applies.
    pub fn retain_present(&mut self, present: impl Fn(&SignalRef) -> bool) -> usize {
        let before = self.signals().count();
        for plot in &mut self.plots {
            plot.signals.retain(&present);
            plot.x = plot.x.take().filter(&present);
        }
        self.plots.retain(|p| !p.signals.is_empty());
        before - self.signals().count()
    }

    /// Defines derived signal `spec`, replacing the one of the same name (or of the name
    /// `replacing`, which plots then show under the new name).
    pub fn define(&mut self, replacing: Option<&str>, spec: DerivedSpec) {
        let old = replacing.unwrap_or(&spec.name).to_owned();
        if old != spec.name {
            let from = SignalRef {
                topic: DERIVED_TOPIC.to_owned(),
                path: old.clone(),
            };
            let to = spec.signal();
            for s in self
                .plots
                .iter_mut()
                .flat_map(|p| p.x.iter_mut().chain(p.signals.iter_mut()))
            {
                if *s == from {
                    *s = to.clone();
                }
            }
        }
        match self.derived.iter_mut().find(|d| d.name == old) {
            Some(d) => *d = spec,
            None => self.derived.push(spec),
        }
    }

    /// Removes derived signal `name` and its traces.
    pub fn undefine(&mut self, name: &str) {
        self.derived.retain(|d| d.name != name);
        self.retain_present(|s| !(s.topic == DERIVED_TOPIC && s.path == name));
    }

    /// Every signal in the layout (an XY plot's x first).
    pub fn signals(&self) -> impl Iterator<Item = &SignalRef> {
        self.plots
            .iter()
            .flat_map(|p| p.x.iter().chain(p.signals.iter()))
    }
}

/// What is saved between runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Persisted {
    /// Most recent first.
    pub recent: Vec<String>,
    /// The plot layout.
    pub layout: Layout,
    /// Recent layout files, most recent first.
    #[serde(default)]
    pub recent_layouts: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(topic: &str, path: &str) -> SignalRef {
        SignalRef {
            topic: topic.into(),
            path: path.into(),
        }
    }

    #[test]
    fn only_present_signals_and_the_plots_holding_them_are_kept() {
        let mut layout = Layout::default();
        layout.add(None, signal("a", "x"));
        layout.add(Some(0), signal("gone", "y"));
        layout.add(None, signal("gone", "z"));
        let dropped = layout.retain_present(|s| s.topic != "gone");
        assert_eq!(dropped, 2);
        assert_eq!(layout.plots, vec![PlotSpec::of(vec![signal("a", "x")])]);
    }
}
