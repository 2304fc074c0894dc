package analyze

import ()

// codeGeneratedAlways is generated_always (identity columns).
const codeGeneratedAlways = "428C9"
