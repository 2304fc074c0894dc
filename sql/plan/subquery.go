package plan

import ()

func (*SelectPlan) IsSubplan() {}
