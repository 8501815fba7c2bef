package dist

import "context"

func (g *Group) setupShm(ctx context.Context, infos []peerInfo) error { return nil }
