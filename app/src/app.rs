//! [`Scope`]: the whole app's state and its frame. Works both inside eframe and in an
//! egui_kittest harness (`scope.ui(ui)`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use decode::LeafKind;
use egui::{Key, RichText};

use crate::app::open::{
    OpenEvent, PickKind, PickPath, demo_in_background, open_in_background, pick_in_background,
};
use crate::data::inspector::Inspector;
use crate::data::layout::{Layout, Persisted, PlotSpec, SignalRef};
use crate::error::Error;
use crate::live::save::{SaveProgress, save_capture};
use crate::live::{LiveCapture, LiveOptions};
use crate::recording::Recording;
use crate::ui::health::health_ui;
use crate::ui::inspector::inspector_ui;
use crate::ui::plots::{PlotView, plot_stack_ui};
use crate::ui::theme;
use crate::ui::timeline::{Playback, Step, advance, timeline_ui};
use crate::ui::tree::topic_tree_ui;

mod icon;
pub mod open;
pub mod screenshot;

pub use icon::icon;

/// How many recent files are remembered.
const RECENT_MAX: usize = 10;

/// Which panel is on the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RightPanel {
    /// Health.
    Health,
    /// Inspector.
    Inspector,
}

#[derive(Debug)]
enum Command {
    Open(PathBuf),
    Pick(PickKind),
    DemoRecording,
    Live(LiveOptions),
}

/// Seconds of newest data shown while following a live capture.
const FOLLOW_WINDOW_S: f64 = 10.0;

/// The File > Connect form.
#[derive(Debug, Clone)]
pub struct ConnectForm {
    /// Shown.
    pub open: bool,
    /// Endpoint to connect to.
    pub endpoint: String,
    /// Key expression to capture.
    pub key_expr: String,
    /// Capture cap, MiB.
    pub cap_mib: u32,
    /// Keep what the cap evicts in a temporary bag on disk.
    pub spill: bool,
}

impl Default for ConnectForm {
    fn default() -> Self {
        Self {
            open: false,
            endpoint: "tcp/127.0.0.1:7447".into(),
            key_expr: "**".into(),
            cap_mib: 1024,
            spill: false,
        }
    }
}

/// A Save Recording in progress or finished.
#[derive(Debug)]
struct SaveJob {
    path: PathBuf,
    progress: Arc<SaveProgress>,
    result: Receiver<Result<bag::BagSummary, Error>>,
}

/// A pending `--screenshot-to`.
#[derive(Debug)]
struct ScreenshotJob {
    out: PathBuf,
    frames_ready: u32,
    requested: bool,
    started: Instant,
    result: Arc<Mutex<Option<Result<(), Error>>>>,
    exit_code: Arc<AtomicI32>,
}

/// The app.
pub struct Scope {
    pick: PickPath,
    commands: Vec<Command>,
    open_tx: Sender<OpenEvent>,
    open_rx: Receiver<OpenEvent>,
    opening: usize,
    recording: Option<Recording>,
    inspector: Option<Inspector>,
    /// The last error, shown until dismissed.
    pub error: Option<Error>,
    /// Recent files and layout (saved by eframe).
    pub persisted: Persisted,
    view: PlotView,
    /// Playhead, play/pause, speed.
    pub playback: Playback,
    filter: String,
    focused_plot: Option<usize>,
    /// The panel on the right.
    pub right: RightPanel,
    screenshot: Option<ScreenshotJob>,
    default_layout: bool,
    /// Live view follows the newest data (off: paused, free to scrub).
    pub follow: bool,
    /// The window following asked the plots for this frame (`None`: not following at the
    /// start of this frame).
    follow_range: Option<(f64, f64)>,
    /// File > Connect.
    pub connect_form: ConnectForm,
    save: Option<SaveJob>,
    save_pick: Option<Receiver<Option<PathBuf>>>,
    /// The last thing that finished (e.g. a save), shown in the status bar.
    pub notice: Option<String>,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("recording", &self.recording)
            .field("error", &self.error)
            .finish()
    }
}

impl Scope {
    /// A scope with nothing open; `pick` is the file dialog (see [`crate::app::open::native_dialog`]).
    pub fn new(pick: PickPath) -> Self {
        let (open_tx, open_rx) = bounded(8);
        Self {
            pick,
            commands: Vec::new(),
            open_tx,
            open_rx,
            opening: 0,
            recording: None,
            inspector: None,
            error: None,
            persisted: Persisted::default(),
            view: PlotView::default(),
            playback: Playback::default(),
            filter: String::new(),
            focused_plot: None,
            right: RightPanel::Health,
            screenshot: None,
            default_layout: false,
            follow: true,
            follow_range: None,
            connect_form: ConnectForm::default(),
            save: None,
            save_pick: None,
            notice: None,
        }
    }

    /// Opens `path` (read off the UI thread, starting with the next frame).
    pub fn open(&mut self, path: PathBuf) {
        self.commands.push(Command::Open(path));
    }

    /// Starts the live demo: a simulated vehicle on an in-process zenoh session.
    pub fn open_demo(&mut self) {
        self.start_live(LiveOptions::demo());
    }

    /// Writes and opens the built-in demo recording (a torn part, drops, a silent topic).
    pub fn open_demo_recording(&mut self) {
        self.default_layout = true;
        self.commands.push(Command::DemoRecording);
    }

    /// Starts capturing live data (closing what was open).
    pub fn start_live(&mut self, options: LiveOptions) {
        self.default_layout = true;
        self.commands.push(Command::Live(options));
    }

    /// Saves the live capture into the bag directory the injected dialog picks.
    pub fn save_recording(&mut self) {
        if self.is_saving() {
            return;
        }
        let (tx, rx) = bounded(1);
        let pick = Arc::clone(&self.pick);
        let spawned = std::thread::Builder::new()
            .name("scope-save-dialog".into())
            .spawn(move || {
                let _ = tx.send(pick(PickKind::SaveBag));
            });
        match spawned {
            Ok(_) => self.save_pick = Some(rx),
            Err(source) => {
                self.error = Some(Error::Thread {
                    name: "scope-save-dialog",
                    source,
                })
            }
        }
    }

    /// Saves the live capture into `dir` on a background thread.
    pub fn save_recording_to(&mut self, dir: PathBuf) {
        let Some(shared) = self
            .recording
            .as_ref()
            .and_then(Recording::capture)
            .map(|c| Arc::clone(c.shared()))
        else {
            self.error = Some(Error::NothingCaptured);
            return;
        };
        let progress = Arc::new(SaveProgress::default());
        let (tx, rx) = bounded(1);
        let job_progress = Arc::clone(&progress);
        let target = dir.clone();
        let spawned = std::thread::Builder::new()
            .name("scope-save".into())
            .spawn(move || {
                let _ = tx.send(save_capture(&shared, &target, &job_progress));
            });
        match spawned {
            Ok(_) => {
                self.notice = None;
                self.save = Some(SaveJob {
                    path: dir,
                    progress,
                    result: rx,
                });
            }
            Err(source) => {
                self.error = Some(Error::Thread {
                    name: "scope-save",
                    source,
                })
            }
        }
    }

    /// True while a save is running.
    pub fn is_saving(&self) -> bool {
        self.save.is_some() || self.save_pick.is_some()
    }

    /// Shows the file dialog as File > Open would.
    pub fn pick(&mut self, kind: PickKind) {
        self.commands.push(Command::Pick(kind));
    }

    /// Renders one frame once loaded with a default layout, writes it to `out` and closes;
    /// the exit code lands in `exit_code` (0 written, 1 failed).
    pub fn screenshot_to(&mut self, out: PathBuf, exit_code: Arc<AtomicI32>) {
        self.default_layout = true;
        self.screenshot = Some(ScreenshotJob {
            out,
            frames_ready: 0,
            requested: false,
            started: Instant::now(),
            result: Arc::new(Mutex::new(None)),
            exit_code,
        });
    }

    /// The open recording.
    pub fn recording(&self) -> Option<&Recording> {
        self.recording.as_ref()
    }

    /// True while a recording is being opened (dialog, summaries or demo).
    pub fn is_opening(&self) -> bool {
        self.opening > 0 || !self.commands.is_empty()
    }

    /// The plot layout.
    pub fn layout(&self) -> &Layout {
        &self.persisted.layout
    }

    /// The plot layout, to change.
    pub fn layout_mut(&mut self) -> &mut Layout {
        &mut self.persisted.layout
    }

    /// Points handed to egui_plot in the last frame.
    pub fn points_last_frame(&self) -> usize {
        self.view.points_last_frame
    }

    /// Closes the recording (cancels loading).
    pub fn close(&mut self) {
        self.recording = None;
        self.inspector = None;
        self.view.clear();
        self.playback = Playback::default();
    }

    fn remember(&mut self, path: &std::path::Path) {
        let s = path.display().to_string();
        self.persisted.recent.retain(|p| p != &s);
        self.persisted.recent.insert(0, s);
        self.persisted.recent.truncate(RECENT_MAX);
    }

    /// Plots the first float fields of the first topics (outside headers).
    pub fn apply_default_layout(&mut self) {
        let Some(rec) = &self.recording else {
            return;
        };
        let mut layout = Layout::default();
        for (i, topic) in rec.summary().topics.iter().enumerate() {
            if layout.plots.len() >= 4 {
                break;
            }
            let Some(data) = rec.data(i) else {
                continue;
            };
            let signals: Vec<SignalRef> = data
                .fields
                .iter()
                .filter(|f| f.kind == LeafKind::Float && !f.path.starts_with("header"))
                .take(2)
                .map(|f| SignalRef {
                    topic: topic.topic.clone(),
                    path: f.path.clone(),
                })
                .collect();
            if !signals.is_empty() {
                layout.plots.push(PlotSpec { signals });
            }
        }
        if layout.plots.is_empty() {
            // Nothing float: take any numeric leaf.
            for (i, topic) in rec.summary().topics.iter().enumerate() {
                if let Some(f) = rec.data(i).and_then(|d| d.fields.first()) {
                    layout.add(
                        None,
                        SignalRef {
                            topic: topic.topic.clone(),
                            path: f.path.clone(),
                        },
                    );
                }
                if layout.plots.len() >= 4 {
                    break;
                }
            }
        }
        self.persisted.layout = layout;
    }

    /// Adds a signal to the focused plot (a new plot when none is focused).
    pub fn add_signal(&mut self, signal: SignalRef) {
        let target = self
            .focused_plot
            .or_else(|| self.persisted.layout.plots.len().checked_sub(1));
        self.persisted.layout.add(target, signal);
        if self.focused_plot.is_none() {
            self.focused_plot = self.persisted.layout.plots.len().checked_sub(1);
        }
    }

    /// Moves the playhead to the next or previous message of the plotted topics (all topics
    /// when nothing is plotted).
    pub fn step(&mut self, step: Step) {
        let Some(rec) = &self.recording else {
            return;
        };
        let mut topics: Vec<usize> = self
            .persisted
            .layout
            .signals()
            .filter_map(|s| rec.topic_index(&s.topic))
            .collect();
        if topics.is_empty() {
            topics = (0..rec.topics.len()).collect();
        }
        let t = self.playback.playhead_ns;
        let mut best: Option<u64> = None;
        for i in topics {
            let Some(data) = rec.data(i) else {
                continue;
            };
            let candidate = match step {
                Step::Forward => {
                    let k = data.times_ns.partition_point(|&x| x <= t);
                    data.times_ns.get(k).copied()
                }
                Step::Back => {
                    let k = data.times_ns.partition_point(|&x| x < t);
                    k.checked_sub(1).and_then(|k| data.times_ns.get(k).copied())
                }
            };
            if let Some(c) = candidate {
                best = Some(match (best, step) {
                    (None, _) => c,
                    (Some(b), Step::Forward) => b.min(c),
                    (Some(b), Step::Back) => b.max(c),
                });
            }
        }
        if let Some(b) = best {
            self.playback.playhead_ns = b;
        }
    }

    fn run_commands(&mut self, ctx: &egui::Context) {
        let repaint: Arc<dyn Fn() + Send + Sync> = {
            let ctx = ctx.clone();
            Arc::new(move || ctx.request_repaint())
        };
        for command in std::mem::take(&mut self.commands) {
            self.opening += 1;
            let tx = self.open_tx.clone();
            let started = match command {
                Command::Open(path) => open_in_background(path, tx, Arc::clone(&repaint)),
                Command::Pick(kind) => {
                    pick_in_background(Arc::clone(&self.pick), kind, tx, Arc::clone(&repaint))
                }
                Command::DemoRecording => demo_in_background(tx, Arc::clone(&repaint)),
                Command::Live(options) => {
                    self.opening = self.opening.saturating_sub(1);
                    self.close();
                    let capture = LiveCapture::start(options, Arc::clone(&repaint));
                    let source = Arc::clone(capture.shared());
                    self.inspector = Some(Inspector::start(source, Arc::clone(&repaint)));
                    self.recording = Some(Recording::live(capture));
                    self.follow = true;
                    self.error = None;
                    self.focused_plot = None;
                    Ok(())
                }
            };
            if let Err(e) = started {
                self.opening = self.opening.saturating_sub(1);
                self.error = Some(e);
            }
        }
        self.poll_save();
        while let Ok(event) = self.open_rx.try_recv() {
            self.opening = self.opening.saturating_sub(1);
            match event {
                OpenEvent::Cancelled => {}
                OpenEvent::Failed(e) => self.error = Some(e),
                OpenEvent::Opened { source, demo } => {
                    self.close();
                    if !demo {
                        self.remember(&source.summary().path);
                    }
                    self.playback.playhead_ns = source.summary().time_range_ns.map_or(0, |r| r.0);
                    self.inspector =
                        Some(Inspector::start(Arc::clone(&source), Arc::clone(&repaint)));
                    self.recording = Some(Recording::start(source, Arc::clone(&repaint)));
                    self.error = None;
                    self.focused_plot = None;
                }
            }
        }
        let mut just_loaded = false;
        if let Some(rec) = &mut self.recording {
            let was_loaded = rec.loaded();
            rec.poll(Duration::from_millis(8));
            just_loaded = !was_loaded && rec.loaded();
            if !rec.loaded() {
                // Progress counters move without events.
                ctx.request_repaint_after(Duration::from_millis(100));
            }
        }
        if just_loaded && self.default_layout && self.persisted.layout.plots.is_empty() {
            self.apply_default_layout();
        }
        if let Some(e) = self.recording.as_mut().and_then(Recording::take_failure) {
            self.error = Some(e);
        }
        if let Some(rec) = &self.recording
            && rec.capture().is_some()
        {
            // A live capture's default layout waits for data on a few topics.
            let with_data = (0..rec.topics.len())
                .filter(|&i| rec.data(i).is_some_and(|d| !d.times_ns.is_empty()))
                .count();
            if self.default_layout && self.persisted.layout.plots.is_empty() && with_data >= 3 {
                self.apply_default_layout();
                self.default_layout = false;
            }
        }
        self.follow_range = None;
        if let Some(rec) = &self.recording
            && rec.capture().is_some()
        {
            if self.follow {
                let t1 = rec.t1_ns();
                self.playback.playhead_ns = t1;
                let end = (t1.saturating_sub(rec.t0_ns())) as f64 / 1e9;
                let range = ((end - FOLLOW_WINDOW_S).max(0.0), end.max(1e-3));
                self.view.pending_x_range_s = Some(range);
                self.follow_range = Some(range);
            }
            ctx.request_repaint_after(Duration::from_millis(100));
        }
    }

    fn poll_save(&mut self) {
        if let Some(rx) = &self.save_pick
            && let Ok(choice) = rx.try_recv()
        {
            self.save_pick = None;
            if let Some(dir) = choice {
                self.save_recording_to(dir);
            }
        }
        let Some(job) = &self.save else {
            return;
        };
        let Ok(result) = job.result.try_recv() else {
            return;
        };
        match result {
            Ok(summary) => {
                let mut notice = format!(
                    "Saved {} messages to {}",
                    summary.message_count,
                    job.path.display()
                );
                if summary.dropped_messages > 0 {
                    notice.push_str(&format!(
                        " ({} dropped before saving, recorded in its index)",
                        summary.dropped_messages
                    ));
                }
                self.notice = Some(notice);
            }
            Err(e) => self.error = Some(e),
        }
        self.save = None;
    }

    fn keys(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let (space, left, right, plus, minus, home) = ctx.input(|i| {
            (
                i.key_pressed(Key::Space),
                i.key_pressed(Key::ArrowLeft),
                i.key_pressed(Key::ArrowRight),
                i.key_pressed(Key::Plus) || i.key_pressed(Key::Equals),
                i.key_pressed(Key::Minus),
                i.key_pressed(Key::Home),
            )
        });
        let live = self
            .recording
            .as_ref()
            .is_some_and(|r| r.capture().is_some());
        if space && live {
            self.follow = !self.follow;
        } else if space {
            self.playback.playing = !self.playback.playing;
        }
        if live && (left || right || plus || minus) {
            self.follow = false;
        }
        if left {
            self.step(Step::Back);
        }
        if right {
            self.step(Step::Forward);
        }
        if let Some(rec) = &self.recording {
            let full = (0.0, (rec.t1_ns().saturating_sub(rec.t0_ns())) as f64 / 1e9);
            let (a, b) = self.view.x_range_s.unwrap_or(full);
            let center = (self.playback.playhead_ns as f64 - rec.t0_ns() as f64) / 1e9;
            if plus {
                let half = (b - a) / 4.0;
                self.view.pending_x_range_s = Some((center - half, center + half));
            }
            if minus {
                let half = b - a;
                self.view.pending_x_range_s = Some((center - half, center + half));
            }
            if home {
                self.view.pending_x_range_s = Some(full);
            }
        }
    }

    fn menu_ui(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open File...").clicked() {
                    self.pick(PickKind::File);
                    ui.close();
                }
                if ui.button("Open Folder...").clicked() {
                    self.pick(PickKind::Folder);
                    ui.close();
                }
                ui.menu_button("Open Recent", |ui| {
                    if self.persisted.recent.is_empty() {
                        ui.label("No recent recordings");
                    }
                    let mut chosen = None;
                    for path in &self.persisted.recent {
                        if ui.button(path).clicked() {
                            chosen = Some(PathBuf::from(path));
                        }
                    }
                    if let Some(p) = chosen {
                        self.open(p);
                        ui.close();
                    }
                });
                ui.separator();
                if ui.button("Connect...").clicked() {
                    self.connect_form.open = true;
                    ui.close();
                }
                let live = self
                    .recording
                    .as_ref()
                    .is_some_and(|r| r.capture().is_some());
                if ui
                    .add_enabled(
                        live && !self.is_saving(),
                        egui::Button::new("Save Recording..."),
                    )
                    .clicked()
                {
                    self.save_recording();
                    ui.close();
                }
                ui.separator();
                if ui.button("Live Demo").clicked() {
                    self.open_demo();
                    ui.close();
                }
                if ui.button("Demo Recording").clicked() {
                    self.open_demo_recording();
                    ui.close();
                }
                if ui.button("Close").clicked() {
                    self.close();
                    ui.close();
                }
            });
            ui.menu_button("View", |ui| {
                if ui.button("Reset view").clicked() {
                    if let Some(rec) = &self.recording {
                        self.view.pending_x_range_s =
                            Some((0.0, (rec.t1_ns().saturating_sub(rec.t0_ns())) as f64 / 1e9));
                    }
                    ui.close();
                }
                if ui.button("Default layout").clicked() {
                    self.apply_default_layout();
                    ui.close();
                }
                if ui.button("Clear plots").clicked() {
                    self.persisted.layout = Layout::default();
                    self.focused_plot = None;
                    ui.close();
                }
            });
            ui.separator();
            if let Some(rec) = &self.recording {
                ui.label(RichText::new(&rec.summary().name).strong());
                if rec.loaded() {
                    let samples: usize = (0..rec.topics.len())
                        .filter_map(|i| rec.data(i))
                        .map(|d| d.sample_count())
                        .sum();
                    ui.label(
                        RichText::new(format!(
                            "{} messages, {samples} samples",
                            rec.summary().health.message_count
                        ))
                        .weak(),
                    );
                } else {
                    ui.add(
                        egui::ProgressBar::new(rec.progress())
                            .desired_width(160.0)
                            .show_percentage()
                            .text(format!("Loading {:.0}%", rec.progress() * 100.0)),
                    );
                    if ui.button("Cancel").clicked() {
                        self.close();
                    }
                }
            }
            if self.is_opening() {
                ui.spinner();
                ui.label("Opening...");
            }
        });
    }

    /// One frame of the whole app.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        // Drag and drop onto the window.
        let dropped: Option<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_path_buf()));
        if let Some(p) = dropped {
            self.open(p);
        }
        self.run_commands(&ctx);
        self.keys(&ctx);
        if let Some(rec) = &self.recording
            && rec.capture().is_none()
        {
            let dt = f64::from(ctx.input(|i| i.stable_dt)).min(0.1);
            advance(&mut self.playback, dt, rec.t1_ns());
            if self.playback.playing {
                ctx.request_repaint();
            }
        }

        egui::Panel::top("scope-menu").show(ui, |ui| self.menu_ui(ui));
        if let Some(err) = self.error.as_ref().map(Error::report) {
            egui::Panel::top("scope-error").show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.colored_label(theme::ERROR, format!("Error: {err}"));
                    if ui.small_button("Dismiss").clicked() {
                        self.error = None;
                    }
                });
            });
        }
        self.connect_ui(&ctx);
        if self
            .recording
            .as_ref()
            .is_some_and(|r| r.capture().is_some())
        {
            egui::Panel::bottom("scope-live-status").show(ui, |ui| self.live_status_ui(ui));
        }
        let Some(rec) = &self.recording else {
            egui::CentralPanel::default().show(ui, |ui| {
                ui.vertical_centered(|ui| {
                    ui.add_space(80.0);
                    ui.heading("Redline Scope");
                    if self.is_opening() {
                        ui.spinner();
                        ui.label("Opening...");
                    } else {
                        ui.label(
                            "File > Open, or drop a bag directory or .mcap file here; \
                             File > Connect to capture live zenoh data.",
                        );
                    }
                });
            });
            self.finish_screenshot(&ctx);
            return;
        };
        let mut step = None;
        egui::Panel::bottom("scope-timeline").show(ui, |ui| {
            ui.add_space(4.0);
            step = timeline_ui(ui, rec, &mut self.playback);
            ui.add_space(4.0);
        });
        let mut clicked_signal = None;
        egui::Panel::left("scope-tree")
            .resizable(true)
            .default_size(280.0)
            .max_size(480.0)
            .show(ui, |ui| {
                ui.heading("Topics");
                clicked_signal = topic_tree_ui(ui, rec, &mut self.filter);
            });
        egui::Panel::right("scope-side")
            .resizable(true)
            .default_size(340.0)
            .max_size(520.0)
            .show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.right, RightPanel::Health, "Health");
                    ui.selectable_value(&mut self.right, RightPanel::Inspector, "Inspector");
                });
                ui.separator();
                match self.right {
                    RightPanel::Health => health_ui(ui, rec),
                    RightPanel::Inspector => {
                        if let Some(inspector) = &mut self.inspector {
                            if inspector.topic.is_none() {
                                inspector.topic = self
                                    .persisted
                                    .layout
                                    .signals()
                                    .next()
                                    .and_then(|s| rec.topic_index(&s.topic));
                            }
                            inspector_ui(ui, rec, inspector, self.playback.playhead_ns);
                        }
                    }
                }
            });
        let mut actions = Default::default();
        egui::CentralPanel::default().show(ui, |ui| {
            actions = plot_stack_ui(
                ui,
                rec,
                &self.persisted.layout,
                &mut self.view,
                self.playback.playhead_ns,
                self.focused_plot,
            );
        });
        if let Some(s) = step {
            self.step(s);
        }
        if let Some(signal) = clicked_signal {
            self.add_signal(signal);
        }
        let layout = &mut self.persisted.layout;
        if let Some(t) = actions.seek_ns {
            self.playback.playhead_ns = t;
        }
        if actions.focused.is_some() {
            self.focused_plot = actions.focused;
        }
        if let Some((plot, signal)) = actions.dropped {
            layout.add(plot, signal);
        }
        if let Some((p, s)) = actions.remove_signal
            && let Some(plot) = layout.plots.get_mut(p)
            && s < plot.signals.len()
        {
            plot.signals.remove(s);
        }
        if let Some(p) = actions.remove_plot
            && p < layout.plots.len()
        {
            layout.plots.remove(p);
            self.focused_plot = None;
        }
        self.stop_following_on_user_move(&ctx);
        self.finish_screenshot(&ctx);
    }

    /// Scrubbing, stepping, or zooming and panning a plot while following a live capture
    /// pauses following, so the view stays where the user put it.
    fn stop_following_on_user_move(&mut self, ctx: &egui::Context) {
        let Some(rec) = &self.recording else {
            return;
        };
        // Only a frame that started out following can be moved away from the newest data.
        if !self.follow || self.follow_range.is_none() || rec.capture().is_none() {
            return;
        }
        if self.playback.playhead_ns != rec.t1_ns() {
            self.follow = false;
            return;
        }
        let (scrolled, dragged) = ctx.input(|i| {
            (
                i.smooth_scroll_delta != egui::Vec2::ZERO || i.zoom_delta() != 1.0,
                i.pointer.is_decidedly_dragging(),
            )
        });
        if let (true, Some(want), Some(got)) =
            (scrolled || dragged, self.follow_range, self.view.x_range_s)
        {
            let tolerance = (want.1 - want.0).abs() * 1e-3;
            if (want.0 - got.0).abs() > tolerance || (want.1 - got.1).abs() > tolerance {
                self.follow = false;
            }
        }
    }

    fn connect_ui(&mut self, ctx: &egui::Context) {
        if !self.connect_form.open {
            return;
        }
        let mut open = true;
        let mut connect = false;
        egui::Window::new("Connect")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, |ui| {
                let form = &mut self.connect_form;
                egui::Grid::new("connect-grid")
                    .num_columns(2)
                    .show(ui, |ui| {
                        ui.label("Endpoint");
                        ui.text_edit_singleline(&mut form.endpoint)
                            .on_hover_text("A zenoh endpoint: tcp/HOST:PORT, udp/HOST:PORT");
                        ui.end_row();
                        ui.label("Key expression");
                        ui.text_edit_singleline(&mut form.key_expr)
                            .on_hover_text("What to capture, e.g. car/** (** is everything)");
                        ui.end_row();
                        ui.label("Capture cap (MiB)");
                        ui.add(egui::DragValue::new(&mut form.cap_mib).range(16..=65_536));
                        ui.end_row();
                        ui.label("");
                        ui.checkbox(&mut form.spill, "Spill evicted messages to disk")
                            .on_hover_text(
                                "Keep what the cap evicts in a temporary bag, so Save Recording \
                                 includes it",
                            );
                        ui.end_row();
                    });
                connect = ui.button("Connect").clicked();
            });
        if connect {
            let form = &self.connect_form;
            let mut options = LiveOptions::connect(form.endpoint.trim(), form.key_expr.trim());
            options.cap_bytes = (form.cap_mib as usize) << 20;
            options.spill = form.spill;
            self.start_live(options);
            open = false;
        }
        self.connect_form.open = open;
    }

    fn live_status_ui(&mut self, ui: &mut egui::Ui) {
        let Some(rec) = &self.recording else {
            return;
        };
        let stats = rec.live_stats();
        ui.horizontal(|ui| {
            let (dot, text) = if !stats.connected {
                (theme::LINK_WAITING, "connecting".to_owned())
            } else if rec.capture().is_some_and(|c| c.options().simulate) {
                (theme::LINK_UP, "in-process".to_owned())
            } else {
                let color = if stats.links > 0 {
                    theme::LINK_UP
                } else {
                    theme::LINK_WAITING
                };
                (color, format!("{} links", stats.links))
            };
            let (rect, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().circle_filled(rect.center(), 4.5, dot);
            ui.label(text);
            ui.separator();
            ui.label(format!("{:.0} msg/s", stats.rate_per_s));
            ui.separator();
            let fill = stats.held_bytes as f64 / stats.cap_bytes.max(1) as f64;
            ui.label(format!(
                "buffer {} / {} ({:.1}%)",
                crate::ui::format::format_bytes(stats.held_bytes as u64),
                crate::ui::format::format_bytes(stats.cap_bytes as u64),
                fill * 100.0
            ));
            ui.separator();
            if rec.capture().is_some_and(|c| c.options().spill) {
                ui.label(format!(
                    "evicted {} (spilled {})",
                    stats.evicted, stats.spilled
                ));
            } else {
                ui.label(format!("evicted {}", stats.evicted));
            }
            ui.separator();
            ui.label(format!("transport drops {}", stats.transport_dropped));
            ui.separator();
            ui.checkbox(&mut self.follow, "Follow")
                .on_hover_text("Keep the newest data in view (space toggles)");
            if let Some(job) = &self.save {
                ui.separator();
                let total = job.progress.total.load(Ordering::Relaxed).max(1);
                let done = job.progress.done.load(Ordering::Relaxed);
                ui.add(
                    egui::ProgressBar::new(done as f32 / total as f32)
                        .desired_width(140.0)
                        .text(format!("Saving {done}/{total}")),
                );
            } else if let Some(notice) = &self.notice {
                ui.separator();
                ui.label(notice);
            }
        });
    }

    fn finish_screenshot(&mut self, ctx: &egui::Context) {
        let Some(job) = &mut self.screenshot else {
            return;
        };
        // A live capture is shown once its plots hold several seconds of data.
        let live_ready = |r: &Recording| {
            r.capture().is_none()
                || (!self.persisted.layout.plots.is_empty()
                    && r.t1_ns().saturating_sub(r.t0_ns()) >= 8_000_000_000)
        };
        let ready = self
            .recording
            .as_ref()
            .is_some_and(|r| r.loaded() && live_ready(r))
            && self.opening == 0
            && self.commands.is_empty();
        let failed = self.error.as_ref().map(Error::report);
        let done = job.result.lock().ok().and_then(|mut r| r.take());
        if let Some(result) = done {
            match result {
                Ok(()) => {
                    eprintln!("scope: wrote {}", job.out.display());
                    job.exit_code.store(0, Ordering::SeqCst);
                }
                Err(e) => {
                    eprintln!("scope: {}", e.report());
                    job.exit_code.store(1, Ordering::SeqCst);
                }
            }
            self.screenshot = None;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if let Some(e) = failed.filter(|_| self.opening == 0 && self.recording.is_none()) {
            eprintln!("scope: {e}");
            job.exit_code.store(1, Ordering::SeqCst);
            self.screenshot = None;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if job.started.elapsed() > Duration::from_secs(300) {
            eprintln!("scope: {}", Error::LoadTimeout);
            job.exit_code.store(1, Ordering::SeqCst);
            self.screenshot = None;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if ready {
            job.frames_ready += 1;
        }
        // A few frames after loading so plots have their final window and points.
        if job.frames_ready >= 4 && !job.requested {
            job.requested = true;
            let out = job.out.clone();
            let slot = Arc::clone(&job.result);
            let repaint = ctx.clone();
            ctx.request_screenshot(move |image| {
                std::thread::spawn(move || {
                    let r = crate::app::screenshot::write_png(&image, &out);
                    if let Ok(mut s) = slot.lock() {
                        *s = Some(r);
                    }
                    repaint.request_repaint();
                });
            });
        }
        ctx.request_repaint_after(Duration::from_millis(50));
    }
}

impl eframe::App for Scope {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        Scope::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.persisted);
    }
}

/// Restores what was saved by [`eframe::App::save`].
pub fn restore(storage: Option<&dyn eframe::Storage>) -> Persisted {
    storage
        .and_then(|s| eframe::get_value::<Persisted>(s, eframe::APP_KEY))
        .unwrap_or_default()
}
