//! `browser_fill_form`: each field set by the action a person's hands would use on it, so the
//! page sees the same input: text typed (`browser_type`), an option chosen
//! (`browser_select_option`), a checkbox or radio clicked (`browser_click`, hit-tested) when it
//! is not already as asked. The first field that fails ends the action, saying which field and
//! which were set before it; then `submit` is clicked.

use serde_json::{json, Value};
use tether_protocol::actions::browser_fill_form::{Field, FieldValue, Filled, Output, Params};
use tether_protocol::actions::{browser_click, browser_select_option, TabId};
use tether_protocol::ActionError;

use super::{
    browser_click as click, browser_select_option as select, browser_type as typing, required_element,
    Context,
};
use crate::page::library::{FieldKind, FieldSort};

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let mut filled = Vec::with_capacity(p.fields.len());
    for (index, field) in p.fields.iter().enumerate() {
        if let Err(error) = fill(cx, p.tab_id, field).await {
            return Err(with_details(error, json!({ "field": index, "filled": filled })));
        }
        filled.push(Filled {
            r#ref: field.r#ref.clone(),
            xpath: field.xpath.clone(),
            ok: true,
        });
    }
    if let Some(submit) = p.submit {
        let press = pressing(p.tab_id, submit.xpath, submit.r#ref);
        if let Err(error) = click::run(cx, press).await {
            return Err(with_details(error, json!({ "submit": true, "filled": filled })));
        }
    }
    Ok(Output { filled })
}

/// Sets one field to its value, as the kind of field it is takes it.
async fn fill(cx: &Context<'_>, tab_id: TabId, field: &Field) -> Result<(), ActionError> {
    let at = required_element(&field.xpath, &field.r#ref)?;
    let (page, at) = cx.reach(tab_id, at).await?;
    let value = match (&field.value, &field.secret) {
        (Some(value), _) => value.clone(),
        (None, secret) => {
            FieldValue::Text(typing::secret_value(cx, &page, secret.as_deref().unwrap_or_default()).await?)
        }
    };
    // Text is typed into the field this call focuses.
    let focus = matches!(value, FieldValue::Text(_));
    let secret = field.secret.as_deref();
    let sort = page.call(&FieldKind { at, focus, secret }).await?;
    let (xpath, r#ref) = (field.xpath.clone(), field.r#ref.clone());
    match (&value, sort.kind) {
        // Focused with its content selected already: type over it.
        (FieldValue::Text(text), FieldSort::Text) => typing::into_focused(&page, text, sort.had_text).await,
        (FieldValue::Text(choice), FieldSort::Select) => {
            choose(cx, tab_id, (xpath, r#ref), vec![choice.clone()]).await
        }
        (FieldValue::Options(choices), FieldSort::Select) if sort.multiple => {
            choose(cx, tab_id, (xpath, r#ref), choices.clone()).await
        }
        (FieldValue::Checked(false), FieldSort::Radio) if sort.checked => {
            Err(ActionError::invalid_params(format!(
                "{} is a radio button: it is unchecked by checking another of its group",
                sort.name
            )))
        }
        (FieldValue::Checked(wanted), FieldSort::Checkbox | FieldSort::Radio) if *wanted != sort.checked => {
            click::run(cx, pressing(tab_id, xpath, r#ref)).await.map(drop)
        }
        (FieldValue::Checked(_), FieldSort::Checkbox | FieldSort::Radio) => Ok(()),
        (value, kind) => Err(ActionError::invalid_params(format!(
            "{} takes {}, not {}",
            sort.name,
            kind.takes(sort.multiple),
            shown(value)
        ))),
    }
}

async fn choose(
    cx: &Context<'_>,
    tab_id: TabId,
    (xpath, r#ref): (Option<String>, Option<String>),
    values: Vec<String>,
) -> Result<(), ActionError> {
    let params = browser_select_option::Params {
        tab_id,
        xpath,
        r#ref,
        values,
        dialog: None,
        observe: None,
        observe_max_chars: None,
        settle: None,
        settle_ms: None,
    };
    select::run(cx, params).await.map(drop)
}

/// A plain left click on an element.
fn pressing(tab_id: TabId, xpath: Option<String>, r#ref: Option<String>) -> browser_click::Params {
    browser_click::Params {
        tab_id,
        xpath,
        r#ref,
        button: Default::default(),
        click_count: 1,
        modifiers: Vec::new(),
        x: None,
        y: None,
        dialog: None,
        observe: None,
        observe_max_chars: None,
        settle: None,
        settle_ms: None,
    }
}

/// A value as a message shows it.
fn shown(value: &FieldValue) -> String {
    match value {
        FieldValue::Checked(on) => on.to_string(),
        FieldValue::Text(_) => "a string".into(),
        FieldValue::Options(_) => "an array".into(),
    }
}

/// The error with `extra` added to its details (kept beside any it had, such as `coveredBy`).
fn with_details(mut error: ActionError, extra: Value) -> ActionError {
    let mut details = match error.details.take() {
        Some(Value::Object(details)) => details,
        Some(other) => serde_json::Map::from_iter([("cause".to_owned(), other)]),
        None => serde_json::Map::new(),
    };
    if let Value::Object(extra) = extra {
        details.extend(extra);
    }
    error.with_details(Value::Object(details))
}
