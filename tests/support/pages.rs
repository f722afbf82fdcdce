//! Pages of 100 of the API's lists, as the tests that walk a whole list (or read one page of
//! it by number) ask for them.

use esimdash_api::model::{EsimQuery, OrderQuery};

/// How many items a page holds: the most the API gives.
pub const PAGE_SIZE: u64 = 100;

/// Page `page` (from 1) of the eSIM list, unfiltered.
pub fn esims_page(page: u64) -> EsimQuery {
    EsimQuery {
        page: Some(page),
        page_size: Some(PAGE_SIZE),
        ..EsimQuery::default()
    }
}

/// Page `page` (from 1) of the order list, unfiltered.
pub fn orders_page(page: u64) -> OrderQuery {
    OrderQuery {
        page: Some(page),
        page_size: Some(PAGE_SIZE),
        ..OrderQuery::default()
    }
}
