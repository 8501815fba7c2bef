package recommend

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/ml"
)

// shared is a rank's view of the ratings after they are indexed and (with
// several ranks) sent to the ranks that own them.
type shared struct {
	users, items *idIndex
	// byUser holds every rating of each user this rank owns, byItem of
	// each item it owns (other rows may hold some ratings too; they are
	// never solved).
	byUser, byItem *csr
	// userLists[r] and itemLists[r] are the entities rank r owns,
	// increasing.
	userLists, itemLists [][]int32
	ownUsers, ownItems   []int32
	shuffleBytes         int64
}

// owners cuts n entities into nb contiguous blocks and deals the blocks
// to size ranks round-robin; it returns each rank's entities.
func owners(n, nb, size int) [][]int32 {
	out := make([][]int32, size)
	for x := range n {
		b := int(int64(x) * int64(nb) / int64(n))
		r := b % size
		out[r] = append(out[r], int32(x))
	}
	return out
}

// ownerOf returns, for each entity, the rank that owns it.
func ownerOf(lists [][]int32, n int) []int8 {
	o := make([]int8, n)
	for r, l := range lists {
		for _, x := range l {
			o[x] = int8(r)
		}
	}
	return o
}

// shareRatings indexes the ids of every rank (the union of the ranks'
// distinct ids, gathered) and, with several ranks, sends each rating to
// the rank that owns its user and the one that owns its item: the ranks
// all-gather their ratings in chunks of bounded size and each keeps what
// it owns (the Comm has no all-to-all; a rank's memory holds its own
// ratings plus one chunk from every rank at a time).
func shareRatings(r *Ratings, c ml.Comm, nbUser, nbItem int, ar *arena) (*shared, error) {
	size, rank := c.Size(), c.Rank()
	if size > 127 {
		return nil, fmt.Errorf("%d ranks: at most 127", size)
	}
	uids, iids := distinctIDs(r.User), distinctIDs(r.Item)
	if size > 1 {
		var err error
		if uids, err = gatherIDs(c, uids); err != nil {
			return nil, fmt.Errorf("user ids: %w", err)
		}
		if iids, err = gatherIDs(c, iids); err != nil {
			return nil, fmt.Errorf("item ids: %w", err)
		}
	}
	sh := &shared{users: newIDIndex(uids), items: newIDIndex(iids)}
	nu, ni := len(uids), len(iids)
	sh.userLists = owners(nu, nbUser, size)
	sh.itemLists = owners(ni, nbItem, size)
	sh.ownUsers, sh.ownItems = sh.userLists[rank], sh.itemLists[rank]
	if size == 1 {
		n := r.Len()
		sh.byUser, sh.byItem = buildBoth(n, nu, ni, func(t int) (int32, int32, float32) {
			return sh.users.lookup(r.User[t]), sh.items.lookup(r.Item[t]), r.Rating[t]
		}, ar)
		return sh, nil
	}
	uo, io := ownerOf(sh.userLists, nu), ownerOf(sh.itemLists, ni)
	const chunk = 1 << 18 // ratings per rank and round (3 MiB)
	rounds := []float64{float64((r.Len() + chunk - 1) / chunk)}
	if err := c.AllReduce(rounds, ml.OpMax); err != nil {
		return nil, err
	}
	var ku, ki []int32
	var kr []float32
	buf := make([]byte, 0, 12*chunk)
	for round := range int(rounds[0]) {
		lo, hi := min(round*chunk, r.Len()), min((round+1)*chunk, r.Len())
		buf = buf[:0]
		for t := lo; t < hi; t++ {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(sh.users.lookup(r.User[t])))
			buf = binary.LittleEndian.AppendUint32(buf, uint32(sh.items.lookup(r.Item[t])))
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(r.Rating[t]))
		}
		all, err := c.AllGatherBytes(buf)
		if err != nil {
			return nil, fmt.Errorf("sharing ratings: %w", err)
		}
		for from, b := range all {
			if len(b)%12 != 0 {
				return nil, fmt.Errorf("sharing ratings: %d bytes from rank %d, not whole ratings", len(b), from)
			}
			if from != rank {
				sh.shuffleBytes += int64(len(b))
			}
			for p := 0; p < len(b); p += 12 {
				u := int32(binary.LittleEndian.Uint32(b[p:]))
				i := int32(binary.LittleEndian.Uint32(b[p+4:]))
				if u < 0 || int(u) >= nu || i < 0 || int(i) >= ni {
					return nil, fmt.Errorf("sharing ratings: rank %d sent a rating of user %d, item %d outside the index", from, u, i)
				}
				if int(uo[u]) == rank || int(io[i]) == rank {
					ku = append(ku, u)
					ki = append(ki, i)
					kr = append(kr, math.Float32frombits(binary.LittleEndian.Uint32(b[p+8:])))
				}
			}
		}
	}
	sh.byUser, sh.byItem = buildBoth(len(kr), nu, ni, func(t int) (int32, int32, float32) {
		return ku[t], ki[t], kr[t]
	}, ar)
	return sh, nil
}

// gatherIDs returns the sorted union of every rank's sorted distinct ids.
func gatherIDs(c ml.Comm, ids []int32) ([]int32, error) {
	b := make([]byte, 4*len(ids))
	for i, v := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	all, err := c.AllGatherBytes(b)
	if err != nil {
		return nil, err
	}
	lists := make([][]int32, len(all))
	for r, bb := range all {
		if len(bb)%4 != 0 {
			return nil, fmt.Errorf("%d bytes of ids from rank %d", len(bb), r)
		}
		l := make([]int32, len(bb)/4)
		for i := range l {
			l[i] = int32(binary.LittleEndian.Uint32(bb[4*i:]))
		}
		lists[r] = l
	}
	return mergeIDs(lists), nil
}

// exchange all-gathers the factors each rank solved (lists[r]: rank r's
// entities; f has row stride ld) so that every rank holds all of f; it
// returns the bytes this rank sent and received.
func exchange(c ml.Comm, lists [][]int32, f []float64, ld, k int) (sent, recv int64, err error) {
	if c.Size() == 1 {
		return 0, 0, nil
	}
	own := lists[c.Rank()]
	buf := make([]byte, 8*k*len(own))
	for j, x := range own {
		for q, v := range f[int(x)*ld : int(x)*ld+k] {
			binary.LittleEndian.PutUint64(buf[8*(j*k+q):], math.Float64bits(v))
		}
	}
	all, err := c.AllGatherBytes(buf)
	if err != nil {
		return 0, 0, err
	}
	for r, b := range all {
		if r == c.Rank() {
			continue
		}
		l := lists[r]
		if len(b) != 8*k*len(l) {
			return 0, 0, fmt.Errorf("%d bytes of factors from rank %d, want %d", len(b), r, 8*k*len(l))
		}
		for j, x := range l {
			d := f[int(x)*ld : int(x)*ld+k]
			for q := range d {
				d[q] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*(j*k+q):]))
			}
		}
		recv += int64(len(b))
	}
	return int64(len(buf)), recv, nil
}
