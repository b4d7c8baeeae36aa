use gui_core::ActionKind;

/// Errors of the action space and the action embedding.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// An [`ActionSpaceConfig`](crate::ActionSpaceConfig) or
    /// [`ActionEmbedding`](crate::ActionEmbedding) setting that cannot be used.
    #[error("action space config `{field}`: {message}")]
    Config {
        field: &'static str,
        message: String,
    },
    /// A target widget embedding whose length is not the configured widget dimension.
    #[error(
        "widget embedding of the `{action}` action has {found} values, expected {expected} \
         (the widget dimension the action embedding was built for)"
    )]
    WidgetDim {
        action: ActionKind,
        expected: usize,
        found: usize,
    },
    /// A target widget embedding given for an action that has no target (a page or system
    /// action, or a widget action built without one).
    #[error(
        "a widget embedding was given for the `{action}` action, which has no target; \
         pass `None` for actions without a target"
    )]
    UnexpectedWidgetEmbedding { action: ActionKind },
    /// A parameter of an action that cannot be embedded (a NaN or infinite ratio).
    #[error("parameter of the `{action}` action: {message}")]
    Param { action: ActionKind, message: String },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
