//! `TGS`: argument and result schema design.
