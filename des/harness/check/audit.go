package check

// auditLine is the part of a decisions.jsonl line the checker reads.
type auditLine struct {
	Step      *int     `json:"step"`
	Time      *float64 `json:"time"`
	AgentID   string   `json:"agent_id"`
	Kind      string   `json:"kind"`
	Action    *int     `json:"action"`
	Source    string   `json:"source"`
	Requested *int     `json:"requested"`
	Reason    string   `json:"reason"`
	Messages  *int     `json:"messages"`
	Role      string   `json:"role"`
	// ReplyError is the controller's note that its reply was unusable.
	ReplyError string `json:"reply_error"`
	// The note's model usage (secondary.llm_calls, prompt_tokens,
	// completion_tokens and by_role).
	Calls              int        `json:"calls"`
	PromptTokens       int64      `json:"prompt_tokens"`
	CompletionTokens   int64      `json:"completion_tokens"`
	PromptCachedTokens int64      `json:"prompt_cached_tokens"`
	Payload            *auditView `json:"payload"`
}

// auditView is the part of an audit's payload the checker reads.
type auditView struct {
	Role         string `json:"role"`
	Kind         string `json:"kind"`
	LegalActions []int  `json:"legal_actions"`
	Observation  struct {
		HeadroomKW float64 `json:"power_headroom_kw"`
		Cell       *struct {
			FreeSlots int `json:"free_slots"`
		} `json:"cell"`
	} `json:"observation"`
	Options []auditOption `json:"options"`
	Context struct {
		Trigger  string `json:"trigger"`
		WorkItem *struct {
			Job int `json:"job"`
			Op  int `json:"op"`
		} `json:"work_item"`
		Authority *struct {
			Paradigm string `json:"paradigm"`
			Mode     string `json:"mode_id"`
			Routing  string `json:"routing_authority_mode"`
			Rule     int    `json:"rule"`
		} `json:"authority"`
	} `json:"context"`
}

// auditOption is one option of a payload.
type auditOption struct {
	Action string `json:"action"`
	Bid    string `json:"bid"`
	Job    *struct {
		Job int     `json:"job"`
		Due float64 `json:"due"`
	} `json:"job"`
	Cell *struct {
		Cell      string  `json:"cell"`
		ProcTime  float64 `json:"proc_time"`
		FreeSlots int     `json:"free_slots"`
		Backlog   float64 `json:"backlog"`
		BusyKW    float64 `json:"busy_kw"`
		Machines  int     `json:"machines"`
		Down      int     `json:"down"`
	} `json:"cell"`
	Area *struct {
		Area        string  `json:"area"`
		Machines    int     `json:"machines"`
		FreeSlots   int     `json:"free_slots"`
		Backlog     float64 `json:"backlog"`
		MinProcTime float64 `json:"min_proc_time"`
	} `json:"area"`
	Mode *struct {
		ID string `json:"mode_id"`
	} `json:"mode"`
}

// chosen is the committed option, nil if the audit names none.
func (a *auditLine) chosen() *auditOption {
	if a.Payload == nil || a.Action == nil || *a.Action < 0 || *a.Action >= len(a.Payload.Options) {
		return nil
	}
	return &a.Payload.Options[*a.Action]
}
