pub(crate) mod method_table;
