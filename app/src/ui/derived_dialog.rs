//! The derived-signal editor (the tree's "New derived signal...", a field's "Derive from
//! this...", a derived signal's "Edit..."): a name, an expression over signals in braces and a
//! transform over time. A field dragged from the tree onto the expression is written in at
//! the end as `{topic/path}`.

use crate::data::derived::{DerivedSpec, Transform};
use crate::data::expression::Expression;
use crate::data::layout::SignalRef;

/// The transforms, as the editor lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransformChoice {
    /// The expression's values.
    #[default]
    None,
    /// Rate of change.
    Derivative,
    /// Integral over time.
    Integral,
    /// Moving average.
    MovingAverage,
    /// First-order low-pass.
    LowPass,
}

impl TransformChoice {
    const ALL: [(TransformChoice, &'static str); 5] = [
        (TransformChoice::None, "none"),
        (TransformChoice::Derivative, "derivative (per s)"),
        (TransformChoice::Integral, "integral (x s)"),
        (TransformChoice::MovingAverage, "moving average"),
        (TransformChoice::LowPass, "low-pass"),
    ];

    fn label(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(c, _)| *c == self)
            .map_or("none", |(_, l)| l)
    }
}

/// The editor's fields.
#[derive(Debug, Clone)]
pub struct DerivedForm {
    /// Shown.
    pub open: bool,
    /// The definition being edited (`None`: a new one).
    pub editing: Option<String>,
    /// Name.
    pub name: String,
    /// Expression.
    pub expression: String,
    /// Transform.
    pub transform: TransformChoice,
    /// The moving average's window, ms.
    pub window_ms: u64,
    /// The low-pass filter's time constant, ms.
    pub tau_ms: u64,
}

impl Default for DerivedForm {
    fn default() -> Self {
        DerivedForm {
            open: false,
            editing: None,
            name: String::new(),
            expression: String::new(),
            transform: TransformChoice::None,
            window_ms: 100,
            tau_ms: 100,
        }
    }
}

impl DerivedForm {
    /// A new definition, of `from` when given (a field's "Derive from this...").
    pub fn new_signal(from: Option<&SignalRef>, taken: &[DerivedSpec]) -> Self {
        let base = from.map_or("derived", |s| {
            s.path.rsplit('.').next().unwrap_or("derived")
        });
        let name = (1..)
            .map(|k| {
                if k == 1 {
                    base.to_owned()
                } else {
                    format!("{base}_{k}")
                }
            })
            .find(|n| !taken.iter().any(|d| d.name == *n))
            .unwrap_or_default();
        DerivedForm {
            open: true,
            name,
            expression: from
                .map(|s| format!("{{{}}}", s.label()))
                .unwrap_or_default(),
            ..DerivedForm::default()
        }
    }

    /// Editing `spec`.
    pub fn edit(spec: &DerivedSpec) -> Self {
        let mut form = DerivedForm {
            open: true,
            editing: Some(spec.name.clone()),
            name: spec.name.clone(),
            expression: spec.expression.clone(),
            ..DerivedForm::default()
        };
        form.transform = match spec.transform {
            Transform::None => TransformChoice::None,
            Transform::Derivative => TransformChoice::Derivative,
            Transform::Integral => TransformChoice::Integral,
            Transform::MovingAverage { window_ms } => {
                form.window_ms = window_ms;
                TransformChoice::MovingAverage
            }
            Transform::LowPass { tau_ms } => {
                form.tau_ms = tau_ms;
                TransformChoice::LowPass
            }
        };
        form
    }

    /// The definition the fields describe.
    pub fn spec(&self) -> DerivedSpec {
        DerivedSpec {
            name: self.name.trim().to_owned(),
            expression: self.expression.trim().to_owned(),
            transform: match self.transform {
                TransformChoice::None => Transform::None,
                TransformChoice::Derivative => Transform::Derivative,
                TransformChoice::Integral => Transform::Integral,
                TransformChoice::MovingAverage => Transform::MovingAverage {
                    window_ms: self.window_ms.max(1),
                },
                TransformChoice::LowPass => Transform::LowPass {
                    tau_ms: self.tau_ms.max(1),
                },
            },
        }
    }

    /// What is wrong with the fields, in words (`None`: they can be saved).
    pub fn problem(&self, taken: &[DerivedSpec]) -> Option<String> {
        let name = self.name.trim();
        if name.is_empty() {
            return Some("Give it a name.".into());
        }
        if name.contains(['{', '}']) {
            return Some("A name cannot hold braces.".into());
        }
        if self.editing.as_deref() != Some(name) && taken.iter().any(|d| d.name == name) {
            return Some(format!("Another derived signal is named {name}."));
        }
        Expression::parse(&self.expression)
            .err()
            .map(|e| e.to_string())
    }
}

/// What the editor asks for.
pub struct Define {
    /// The definition it replaces (by name), when editing.
    pub replacing: Option<String>,
    /// The definition.
    pub spec: DerivedSpec,
}

/// The editor, while `form.open`. Returns the definition when Add (or Save) is pressed.
pub fn derived_dialog_ui(
    ctx: &egui::Context,
    form: &mut DerivedForm,
    taken: &[DerivedSpec],
) -> Option<Define> {
    if !form.open {
        return None;
    }
    let mut open = true;
    let mut done = false;
    let mut cancel = false;
    let title = if form.editing.is_some() {
        "Edit derived signal"
    } else {
        "New derived signal"
    };
    let problem = form.problem(taken);
    egui::Window::new(title)
        .open(&mut open)
        .collapsible(false)
        .resizable(true)
        .default_width(420.0)
        .show(ctx, |ui| {
            egui::Grid::new("derived-grid")
                .num_columns(2)
                .show(ui, |ui| {
                    let label = ui.label("Name");
                    ui.text_edit_singleline(&mut form.name)
                        .labelled_by(label.id);
                    ui.end_row();
                    let label = ui.label("Expression");
                    let edit = ui
                        .add(
                            egui::TextEdit::multiline(&mut form.expression)
                                .desired_rows(2)
                                .desired_width(f32::INFINITY)
                                .hint_text("sqrt({/imu/acc.x}^2 + {/imu/acc.y}^2)"),
                        )
                        .labelled_by(label.id)
                        .on_hover_text(
                            "Signals in braces, {topic/path} as the legend names them (drag a \
                         field from the tree here); derived ones as {Derived/name}.\n\
                         + - * / ^, sqrt abs exp ln log10 sin cos tan atan2(y, x) min(a, b) \
                         max(a, b) floor round, PI E; numbers like 0.5 or 1e-3.\n\
                         The result has a sample at each sample of the fastest signal; the \
                         others give their last value at or before it.",
                        );
                    if let Some(signal) = edit.dnd_release_payload::<SignalRef>() {
                        if !form.expression.is_empty() && !form.expression.ends_with(' ') {
                            form.expression.push(' ');
                        }
                        form.expression.push_str(&format!("{{{}}}", signal.label()));
                    }
                    ui.end_row();
                    let then = ui.label("Then");
                    ui.horizontal(|ui| {
                        egui::ComboBox::from_id_salt("derived-transform")
                            .selected_text(form.transform.label())
                            .show_ui(ui, |ui| {
                                for (choice, label) in TransformChoice::ALL {
                                    ui.selectable_value(&mut form.transform, choice, label);
                                }
                            })
                            .response
                            .labelled_by(then.id);
                        match form.transform {
                            TransformChoice::MovingAverage => {
                                ui.label("window");
                                ui.add(
                                    egui::DragValue::new(&mut form.window_ms)
                                        .range(1..=86_400_000)
                                        .suffix(" ms"),
                                );
                            }
                            TransformChoice::LowPass => {
                                ui.label("tau");
                                ui.add(
                                    egui::DragValue::new(&mut form.tau_ms)
                                        .range(1..=86_400_000)
                                        .suffix(" ms"),
                                );
                            }
                            _ => {}
                        }
                    });
                    ui.end_row();
                });
            let described = form.spec().transform.describe();
            if !described.is_empty() {
                ui.weak(described);
            }
            if let Some(problem) = &problem {
                ui.colored_label(ui.visuals().warn_fg_color, problem);
            }
            ui.horizontal(|ui| {
                let verb = if form.editing.is_some() {
                    "Save"
                } else {
                    "Add"
                };
                done = ui
                    .add_enabled(problem.is_none(), egui::Button::new(verb))
                    .clicked();
                cancel = ui.button("Cancel").clicked();
            });
        });
    let define = done.then(|| Define {
        replacing: form.editing.clone(),
        spec: form.spec(),
    });
    form.open = open && !done && !cancel;
    define
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_signal_from_a_field_is_named_after_it_and_reads_it() {
        let signal = SignalRef {
            topic: "/imu".into(),
            path: "linear_acceleration.x".into(),
        };
        let taken = [DerivedSpec {
            name: "x".into(),
            expression: "1".into(),
            transform: Transform::None,
        }];
        let form = DerivedForm::new_signal(Some(&signal), &taken);
        assert_eq!(form.name, "x_2");
        assert_eq!(form.expression, "{/imu/linear_acceleration.x}");
        assert_eq!(form.problem(&taken), None);
        let mut clash = form.clone();
        clash.name = "x".into();
        assert!(clash.problem(&taken).is_some_and(|p| p.contains("named x")));
        // Editing keeps its own name.
        let edit = DerivedForm::edit(&taken[0]);
        assert_eq!(edit.problem(&taken), None);
        assert_eq!(edit.spec(), taken[0]);
    }

    #[test]
    fn transforms_round_trip_through_the_form() {
        for transform in [
            Transform::Derivative,
            Transform::Integral,
            Transform::MovingAverage { window_ms: 250 },
            Transform::LowPass { tau_ms: 40 },
        ] {
            let spec = DerivedSpec {
                name: "s".into(),
                expression: "{a/b}".into(),
                transform,
            };
            assert_eq!(DerivedForm::edit(&spec).spec(), spec);
        }
    }
}
