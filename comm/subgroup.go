package comm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
)

// Errors of Subgroup and Split; test for them with errors.Is.
var (
	// ErrNotMember: Subgroup was called on a rank that is not in its list.
	ErrNotMember = errors.New("not a member of the subgroup")
	// ErrBadRanks: a subgroup's rank list is empty, has a rank out of range
	// or lists a rank twice.
	ErrBadRanks = errors.New("bad subgroup rank list")
)

// Subgroup returns the process group of the ranks of g listed in ranks, as
// torch.distributed's new_group(ranks): rank ranks[i] of g is rank i of the
// subgroup, so the order of the list is the subgroup's rank order. Every
// collective, with every algorithm, runs on the subgroup among its members
// only, over g's own connections (TCP and shared memory): no new
// connection is made and nothing is exchanged to create it.
//
// Only the members call Subgroup, each with the same list; a member that
// creates several subgroups with the same list from the same parent must
// create them in the same order as the other members (the k-th one of each
// rank is the same group). A rank not in the list gets ErrNotMember, so the
// torch pattern in which every rank calls new_group for every subgroup
// works too. An empty list, a rank out of [0, g.Size()) or a rank listed
// twice is an error wrapping ErrBadRanks.
//
// Messages of the subgroup, of g and of every other subgroup never mix:
// each group has its own tag space (a group id derived from the parent's id,
// the member list and that count, carried in every message header), and
// its own operation queue, so collectives of disjoint or overlapping
// groups (and of g) may run concurrently from different goroutines. As
// within one group, ranks that share several groups must not make a group's
// collective wait on another group's collective that their peers issue
// later.
//
// A subgroup shares its root's fate: when any rank of the job loses a peer,
// times out or sees a protocol error, every group of the job is aborted,
// and errors name the ranks of the job (the group New built), not subgroup
// ranks. Options.Timeout applies to each subgroup operation. Closing a
// subgroup ends its operation queue only; closing the group New built
// closes every subgroup made from it. Subgroups of subgroups are allowed.
func (g *Group) Subgroup(ranks []int) (*Group, error) {
	if len(ranks) == 0 {
		return nil, fmt.Errorf("comm: Subgroup: %w: no ranks", ErrBadRanks)
	}
	me := -1
	seen := make(map[int]bool, len(ranks))
	for i, r := range ranks {
		if r < 0 || r >= g.size {
			return nil, fmt.Errorf("comm: Subgroup %v: %w: rank %d out of range for a group of %d", ranks, ErrBadRanks, r, g.size)
		}
		if seen[r] {
			return nil, fmt.Errorf("comm: Subgroup %v: %w: rank %d listed twice", ranks, ErrBadRanks, r)
		}
		seen[r] = true
		if r == g.rank {
			me = i
		}
	}
	if me < 0 {
		return nil, fmt.Errorf("comm: Subgroup %v: %s: %w", ranks, g.who(), ErrNotMember)
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("comm: Subgroup %v: %s: %w", ranks, g.who(), ErrClosed)
	}
	root := g.root
	if err := root.abortError(); err != nil {
		return nil, fmt.Errorf("comm: Subgroup %v: %s: %w", ranks, g.who(), err)
	}
	members := make([]int, len(ranks))
	for i, r := range ranks {
		members[i] = g.rootRank(r)
	}

	root.subMu.Lock()
	defer root.subMu.Unlock()
	if root.subsClosed {
		return nil, fmt.Errorf("comm: Subgroup %v: %s: %w", ranks, g.who(), ErrClosed)
	}
	if root.subIDs == nil {
		root.subIDs, root.subMade = map[uint32][]int{}, map[string]uint32{}
	}
	made := fmt.Sprint(g.gid, members)
	nth := root.subMade[made]
	root.subMade[made] = nth + 1
	id := subgroupID(g.gid, members, nth)
	if other, ok := root.subIDs[id]; ok || id == 0 {
		// Astronomically rare (32-bit hash); refusing is what keeps two
		// groups from ever sharing a tag space on a link.
		return nil, fmt.Errorf("comm: Subgroup %v: the id %#x of subgroup %v collides with that of subgroup %v on rank %d; "+
			"create the subgroups in another order or with other rank lists", ranks, id, members, other, root.rank)
	}
	sub := &Group{
		opts: g.opts, rank: me, size: len(ranks), jobID: root.jobID,
		ops: make(chan *Work, cap(root.ops)), opsDone: make(chan struct{}),
		shmYieldFor: root.shmYieldFor,
		root:        root, gid: id, members: members,
	}
	sub.opts.Rank, sub.opts.WorldSize = me, len(ranks)
	if root.links != nil {
		sub.links = make([]link, len(members))
		for i, m := range members {
			if i != me {
				sub.links[i] = root.links[m]
			}
		}
	}
	root.subIDs[id] = members
	root.subs = append(root.subs, sub)
	go sub.worker()
	return sub, nil
}

// Split partitions g into disjoint subgroups, as MPI_Comm_split (and
// ncclCommSplit) do: the ranks that pass the same color form one subgroup,
// ordered by key, then by rank in g. It is a collective
// of g (an all-gather of colors and keys): every rank of g must call it. A
// rank that passes a negative color joins no subgroup and gets nil, nil.
func (g *Group) Split(color, key int) (*Group, error) {
	in := []int64{int64(color), int64(key)}
	all := make([]int64, 2*g.size)
	if err := AllGather(g, all, in); err != nil {
		return nil, err
	}
	if color < 0 {
		return nil, nil
	}
	var ranks []int
	for r := 0; r < g.size; r++ {
		if all[2*r] == int64(color) {
			ranks = append(ranks, r)
		}
	}
	slices.SortStableFunc(ranks, func(a, b int) int {
		if all[2*a+1] < all[2*b+1] {
			return -1
		}
		if all[2*a+1] > all[2*b+1] {
			return 1
		}
		return 0
	})
	return g.Subgroup(ranks)
}

// Members returns, for each rank of g in order, its rank in the group New
// built (the job's RANK): 0..Size()-1 for that group itself.
func (g *Group) Members() []int {
	if g.members == nil {
		out := make([]int, g.size)
		for r := range out {
			out[r] = r
		}
		return out
	}
	return slices.Clone(g.members)
}

// rootRank maps rank r of g to the rank of the group New built.
func (g *Group) rootRank(r int) int {
	if g.members == nil {
		return r
	}
	return g.members[r]
}

// subgroupID derives the id of the nth subgroup with members made from the
// group with id parent. Every member derives the same id without talking
// to the others.
func subgroupID(parent uint32, members []int, nth uint32) uint32 {
	h := fnv.New32a()
	var b [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(b[:], v)
		h.Write(b[:])
	}
	put(parent)
	put(nth)
	put(uint32(len(members)))
	for _, m := range members {
		put(uint32(m))
	}
	return h.Sum32()
}
