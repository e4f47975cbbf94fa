//! `browser_upload_file`: hands files from the artifact store to a page's file field, as a
//! person's pick in the file chooser would.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{is_plain_file_name, Element};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Upload files",
    category: Category::Interact,
    description: "Sets files on an <input type=file> (hidden ones too), or on the file chooser that clicking the element opens, as a person's pick: the page hears input and change. The files are artifacts the orchestrator stored first (PUT /artifacts?name=<file name>); the page sees each under its name. An unknown artifact id is INVALID_PARAMS; where the browser will not let the host set files, FORBIDDEN saying what to turn on.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

/// The most files one upload sets.
pub const MAX_FILES: usize = 100;

crate::element_params!(
    xpath = "The <input type=file>, or an element whose click opens a file chooser (any XPath).",
    /// The files, in order: ids of artifacts in the store (PUT /artifacts?name=<file name>).
    pub artifact_ids: Vec<String>,
);

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        Element::required(&p.xpath, &p.r#ref)?;
        if p.artifact_ids.is_empty() || p.artifact_ids.len() > MAX_FILES {
            return Err(format!(
                "artifactIds names 1 to {MAX_FILES} files, not {}",
                p.artifact_ids.len()
            ));
        }
        for id in &p.artifact_ids {
            if !is_plain_file_name(id) || id.starts_with('.') {
                return Err(format!(
                "{id:?} is not an artifact id; store the file with PUT /artifacts?name=<file name> and give the artifactId it answers"
            ));
            }
        }
        Ok(())
    }
);

/// A file the page was given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UploadedFile {
    /// The name the page sees.
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The files the page's field holds now, in order.
    pub files: Vec<UploadedFile>,
}
