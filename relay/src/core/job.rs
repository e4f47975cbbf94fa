//! One accepted action waiting for its turn in its session's queue, with the reply its asker
//! waits on: the scheduler's work, which a session holds without knowing it
//! ([`crate::core::sessions::Work`]).

use crate::core::reply::Reply;
use crate::core::request::Request;
use crate::core::sessions::Work;

pub struct Job {
    pub request: Request,
    pub reply: Reply,
}

impl Work for Job {
    type Waiter = Reply;

    fn action_id(&self) -> &str {
        &self.request.action_id
    }
}
